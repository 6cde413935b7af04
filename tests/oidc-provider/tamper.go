// The tamper-next switch: a middleware around the token endpoint that, once armed,
// rewrites the next successful authorization_code response, replacing its id_token by
// one with the same claims but for the chosen flaw, re-signed with go-jose. It fires
// once, then the endpoint behaves normally again.
package main

import (
	"bytes"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// tamperKinds lists the flaws tamper-next can put into an ID token.
var tamperKinds = map[string]bool{
	"wrong-aud": true, "expired": true, "no-nonce": true,
	"wrong-iss": true, "foreign-key": true, "old-key": true,
}

type tamperer struct {
	keys    *keyRing
	mu      sync.Mutex
	pending string
}

// Arm sets the flaw for the next code exchange. old-key needs a retired key.
func (t *tamperer) Arm(kind string) error {
	if !tamperKinds[kind] {
		return fmt.Errorf("unknown tamper kind %q", kind)
	}
	if kind == "old-key" {
		if _, err := t.keys.Retired(); err != nil {
			return err
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending = kind
	return nil
}

// take returns the armed flaw and disarms it.
func (t *tamperer) take() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	kind := t.pending
	t.pending = ""
	return kind
}

func (t *tamperer) armed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pending != ""
}

// Wrap is the middleware around the token endpoint.
func (t *tamperer) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !t.armed() || r.ParseForm() != nil || r.PostFormValue("grant_type") != "authorization_code" {
			next.ServeHTTP(w, r)
			return
		}
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		body := rec.body.Bytes()
		if rec.status == http.StatusOK {
			if kind := t.take(); kind != "" {
				rewritten, err := t.rewrite(body, kind)
				if err != nil {
					http.Error(w, "tamper "+kind+": "+err.Error(), http.StatusInternalServerError)
					return
				}
				body = rewritten
			}
		}
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.status)
		_, _ = w.Write(body)
	})
}

// rewrite replaces the id_token in a token response body.
func (t *tamperer) rewrite(body []byte, kind string) ([]byte, error) {
	var resp map[string]json.RawMessage
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, err
	}
	var idToken string
	if err := json.Unmarshal(resp["id_token"], &idToken); err != nil {
		return nil, errors.New("no id_token in the response")
	}
	claims, err := payload(idToken)
	if err != nil {
		return nil, err
	}
	forged, err := t.forge(claims, kind)
	if err != nil {
		return nil, err
	}
	resp["id_token"], _ = json.Marshal(forged)
	return json.Marshal(resp)
}

// forge applies the flaw to the claims and signs them with the key it calls for.
func (t *tamperer) forge(claims map[string]any, kind string) (string, error) {
	active := t.keys.Active()
	key, kid := active.private, active.kid
	now := time.Now().Unix()
	switch kind {
	case "wrong-aud":
		claims["aud"] = []string{"someone-else"}
	case "expired":
		claims["iat"], claims["exp"] = now-1200, now-600
	case "no-nonce":
		delete(claims, "nonce")
	case "wrong-iss":
		claims["iss"] = "http://issuer.invalid"
	case "foreign-key":
		// A key never published, under the active key's kid: a forgery.
		foreign, err := newSigningKey()
		if err != nil {
			return "", err
		}
		key = foreign.private
	case "old-key":
		retired, err := t.keys.Retired()
		if err != nil {
			return "", err
		}
		key, kid = retired.private, retired.kid
	}
	return sign(claims, key, kid)
}

// payload decodes a JWT's claims without checking them (the provider minted it).
func payload(jwt string) (map[string]any, error) {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return nil, errors.New("id_token is not a compact JWS")
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var claims map[string]any
	return claims, dec.Decode(&claims)
}

// sign makes an RS256 compact JWS of the claims with the given kid in its header.
func sign(claims map[string]any, key *rsa.PrivateKey, kid string) (string, error) {
	signer, err := jose.NewSigner(
		jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("JWT"),
	)
	if err != nil {
		return "", err
	}
	raw, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(raw)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

// recorder keeps a handler's response so it can be rewritten before it is sent.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	wrote  bool
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
}

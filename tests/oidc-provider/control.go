// The test control API under /_control/ (JSON, no auth, loopback callers only):
// register clients and users, end a user's sessions, rotate the signing key, arm a
// tampered ID token, and a health check. Errors are 4xx with {"error": "..."}.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
)

// validName keeps usernames and client ids plain (a subject must not hold a colon).
var validName = regexp.MustCompile(`^[A-Za-z0-9._@+-]{1,128}$`)

type control struct {
	store  *Storage
	keys   *keyRing
	tamper *tamperer
}

func (c *control) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /_control/clients/{clientId}", c.putClient)
	mux.HandleFunc("PUT /_control/users/{username}", c.putUser)
	mux.HandleFunc("POST /_control/users/{username}/end-sessions", c.endSessions)
	mux.HandleFunc("POST /_control/rotate-keys", c.rotateKeys)
	mux.HandleFunc("POST /_control/tamper-next", c.tamperNext)
	mux.HandleFunc("GET /_control/healthz", func(w http.ResponseWriter, _ *http.Request) {
		reply(w, http.StatusOK, map[string]any{"ok": true})
	})
	mux.HandleFunc("/_control/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusNotFound, fmt.Errorf("no control endpoint %s %s", r.Method, r.URL.Path))
	})
	return loopbackOnly(mux)
}

func (c *control) putClient(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Secret                 string   `json:"secret"`
		RedirectURIs           []string `json:"redirectUris"`
		PostLogoutRedirectURIs []string `json:"postLogoutRedirectUris"`
	}
	id := r.PathValue("clientId")
	if err := decode(r, &body); err != nil || !validName.MatchString(id) || body.Secret == "" || len(body.RedirectURIs) == 0 {
		fail(w, http.StatusBadRequest, errors.Join(errors.New("want a plain client id and {secret, redirectUris[, postLogoutRedirectUris]}"), err))
		return
	}
	c.store.putClient(&Client{ID: id, Secret: body.Secret, Redirects: body.RedirectURIs, PostLogoutRedirects: body.PostLogoutRedirectURIs})
	slog.Info("control: client registered", "client", id, "redirects", body.RedirectURIs)
	reply(w, http.StatusOK, map[string]any{"clientId": id})
}

func (c *control) putUser(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Password string   `json:"password"`
		Email    string   `json:"email"`
		Name     string   `json:"name"`
		Groups   []string `json:"groups"`
		Disabled bool     `json:"disabled"`
	}
	name := r.PathValue("username")
	if err := decode(r, &body); err != nil || !validName.MatchString(name) || body.Password == "" {
		fail(w, http.StatusBadRequest, errors.Join(errors.New("want a plain username and {password, email, name, groups, disabled}"), err))
		return
	}
	u := &User{Username: name, Password: body.Password, Email: body.Email, Name: body.Name,
		Groups: append([]string{}, body.Groups...), Disabled: body.Disabled}
	c.store.putUser(u)
	slog.Info("control: user stored", "user", name, "groups", u.Groups, "disabled", u.Disabled)
	reply(w, http.StatusOK, map[string]any{"username": name, "sub": u.Subject()})
}

func (c *control) endSessions(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("username")
	n, ok := c.store.endSessions(name)
	if !ok {
		fail(w, http.StatusNotFound, fmt.Errorf("no user %q", name))
		return
	}
	slog.Info("control: sessions ended", "user", name, "tokens", n)
	reply(w, http.StatusOK, map[string]any{"revokedTokens": n})
}

func (c *control) rotateKeys(w http.ResponseWriter, r *http.Request) {
	var body struct {
		KeepOld bool `json:"keepOld"`
	}
	if err := decode(r, &body); err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	active, retired, err := c.keys.Rotate(body.KeepOld)
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	slog.Info("control: keys rotated", "active", active.kid, "retired", retired.kid, "keepOld", body.KeepOld)
	reply(w, http.StatusOK, map[string]any{"activeKid": active.kid, "retiredKid": retired.kid})
}

func (c *control) tamperNext(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Kind string `json:"kind"`
	}
	if err := decode(r, &body); err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	if err := c.tamper.Arm(body.Kind); err != nil {
		status := http.StatusBadRequest
		if errors.Is(err, errNoRetiredKey) {
			status = http.StatusConflict
		}
		fail(w, status, err)
		return
	}
	slog.Info("control: next ID token tampered", "kind", body.Kind)
	reply(w, http.StatusOK, map[string]any{"kind": body.Kind})
}

// decode reads a JSON body strictly (unknown fields are a mistake); empty means {}.
func decode(r *http.Request, into any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("bad JSON body: %w", err)
	}
	return nil
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, err error) {
	reply(w, status, map[string]string{"error": err.Error()})
}

// loopbackOnly refuses callers that are not on this machine.
func loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			fail(w, http.StatusForbidden, errors.New("the control API answers loopback callers only"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Puts the provider together: the op library's OpenID Provider (discovery, JWKS,
// authorize, token, userinfo, end_session, revocation) over the in-memory store, with
// the login page, the control API, and three small middlewares: tamper-next around the
// token endpoint, a userinfo guard (a revoked or expired access token is 401), and the
// end of the browser session at end_session.
package main

import (
	"crypto/rand"
	"net/http"
	"strings"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// newHandler builds the whole provider for the given issuer (its base URL).
func newHandler(issuer string) (http.Handler, error) {
	keys, err := newKeyRing()
	if err != nil {
		return nil, err
	}
	store := newStorage(keys)
	config := &op.Config{
		CodeMethodS256:           true,
		AuthMethodPost:           true,
		GrantTypeRefreshToken:    true,
		DefaultLogoutRedirectURI: "/logged-out",
		SupportedUILocales:       []language.Tag{language.English},
		SupportedClaims:          append(append([]string{}, op.DefaultSupportedClaims...), "groups"),
		SupportedScopes: []string{oidc.ScopeOpenID, oidc.ScopeProfile, oidc.ScopeEmail,
			oidc.ScopeOfflineAccess, "groups"},
	}
	// The key that encrypts the opaque access tokens; fresh each run.
	_, _ = rand.Read(config.CryptoKey[:])
	config.CryptoKeyId = "aes-" + rand.Text()[:8]
	provider, err := op.NewProvider(config, store, op.StaticIssuer(issuer), op.WithAllowInsecure())
	if err != nil {
		return nil, err
	}
	tamper := &tamperer{keys: keys}
	ctl := &control{store: store, keys: keys, tamper: tamper}
	lg := &login{store: store, callback: op.AuthCallbackURL(provider)}

	mux := http.NewServeMux()
	mux.Handle("/_control/", ctl.handler())
	mux.Handle("/login", op.NewIssuerInterceptor(provider.IssuerFromRequest).Handler(lg))
	mux.HandleFunc("/logged-out", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("signed out\n"))
	})
	mux.Handle(provider.TokenEndpoint().Relative(), tamper.Wrap(provider))
	mux.Handle(provider.UserinfoEndpoint().Relative(), guardUserinfo(provider, store))
	mux.Handle(provider.EndSessionEndpoint().Relative(), endBrowserSession(provider, store))
	mux.Handle("/", provider)
	return mux, nil
}

// guardUserinfo answers 401 (invalid_token) for a bearer token that decrypts but is
// revoked, expired, or whose user is disabled; the op library itself would say 403.
func guardUserinfo(provider *op.Provider, store *Storage) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if ok {
			if plain, err := provider.Crypto().Decrypt(bearer); err == nil {
				id, _, _ := strings.Cut(plain, ":")
				if !store.accessTokenLive(id) {
					w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="access token revoked or expired"`)
					http.Error(w, "access token revoked or expired", http.StatusUnauthorized)
					return
				}
			}
		}
		provider.ServeHTTP(w, r)
	})
}

// endBrowserSession forgets the browser's session cookie at end_session, then lets the
// op library validate the request, revoke the user's tokens and redirect.
func endBrowserSession(provider *op.Provider, store *Storage) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie(sessionCookie); err == nil {
			store.endBrowserSession(c.Value)
			http.SetCookie(w, &http.Cookie{Name: sessionCookie, Path: "/", MaxAge: -1, HttpOnly: true})
		}
		provider.ServeHTTP(w, r)
	})
}

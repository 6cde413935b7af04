// End-to-end checks of the provider over real HTTP: the code flow with PKCE and both
// client authentications, claims, userinfo, refresh (current claims, rotation,
// disabled user, end-sessions), RP-initiated logout with the browser session, key
// rotation, and every tamper kind, judged by the zitadel relying-party verifier.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/pkg/client/rp"
	"github.com/zitadel/oidc/v3/pkg/oidc"
)

const (
	clientID     = "kerf"
	clientSecret = "s3cret-kerf"
	redirectURI  = "http://127.0.0.1:1/auth/callback"
	afterLogout  = "http://127.0.0.1:1/signed-out"
)

// opTest is one running provider and a cookie-less browser for it.
type opTest struct {
	t       *testing.T
	issuer  string
	browser *http.Client
}

func start(t *testing.T) *opTest {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String()
	h, err := newHandler(issuer)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	o := &opTest{t: t, issuer: issuer, browser: noRedirects(nil)}
	o.control("PUT", "/_control/clients/"+clientID, map[string]any{
		"secret": clientSecret, "redirectUris": []string{redirectURI}, "postLogoutRedirectUris": []string{afterLogout},
	}, 200)
	o.putUser("ada", []string{"team-a"}, false)
	return o
}

func noRedirects(jar http.CookieJar) *http.Client {
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (o *opTest) putUser(name string, groups []string, disabled bool) {
	o.control("PUT", "/_control/users/"+name, map[string]any{
		"password": "pw-" + name, "email": name + "@example.test", "name": "User " + name,
		"groups": groups, "disabled": disabled,
	}, 200)
}

// control calls the control API and checks the status; returns the JSON answer.
func (o *opTest) control(method, path string, body any, want int) map[string]any {
	o.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, o.issuer+path, rd)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		o.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != want {
		o.t.Fatalf("%s %s: status %d, want %d: %v", method, path, resp.StatusCode, want, out)
	}
	return out
}

// flow is one sign-in: its PKCE verifier, nonce and state.
type flow struct{ verifier, nonce, state string }

func newFlow() flow {
	return flow{verifier: newID() + newID(), nonce: "n-" + newID(), state: "s-" + newID()}
}

func (f flow) authorizeURL(issuer string, extra url.Values) string {
	sum := sha256.Sum256([]byte(f.verifier))
	q := url.Values{
		"client_id": {clientID}, "redirect_uri": {redirectURI}, "response_type": {"code"},
		"scope": {"openid profile email offline_access"}, "state": {f.state}, "nonce": {f.nonce},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
	}
	for k, v := range extra {
		q[k] = v
	}
	return issuer + "/authorize?" + q.Encode()
}

// get fetches a URL (relative to the issuer when it starts with /).
func (o *opTest) get(c *http.Client, u string) (*http.Response, string) {
	o.t.Helper()
	if strings.HasPrefix(u, "/") {
		u = o.issuer + u
	}
	resp, err := c.Get(u)
	if err != nil {
		o.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// loginPage starts a flow in the browser and returns the login page's request id.
func (o *opTest) loginPage(c *http.Client, f flow) string {
	o.t.Helper()
	resp, _ := o.get(c, f.authorizeURL(o.issuer, nil))
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, "/login?authRequestID=") {
		o.t.Fatalf("authorize: %d to %q", resp.StatusCode, loc)
	}
	resp, page := o.get(c, loc)
	for _, want := range []string{`name="username" id="username"`, `name="password" id="password" type="password"`, `<button type="submit">Sign in</button>`} {
		if !strings.Contains(page, want) {
			o.t.Fatalf("login page lacks %s:\n%s", want, page)
		}
	}
	u, _ := url.Parse(loc)
	return u.Query().Get("authRequestID")
}

// submit posts the login form; returns the response (a redirect on success).
func (o *opTest) submit(c *http.Client, id, user, password string) (*http.Response, string) {
	o.t.Helper()
	resp, err := c.PostForm(o.issuer+"/login", url.Values{"authRequestID": {id}, "username": {user}, "password": {password}})
	if err != nil {
		o.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// followToClient follows the provider's redirects to the client's; returns its query.
func (o *opTest) followToClient(c *http.Client, resp *http.Response) url.Values {
	o.t.Helper()
	for range 5 {
		loc := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusFound {
			o.t.Fatalf("expected a redirect, got %d", resp.StatusCode)
		}
		if strings.HasPrefix(loc, redirectURI+"?") {
			u, _ := url.Parse(loc)
			return u.Query()
		}
		resp, _ = o.get(c, loc)
	}
	o.t.Fatal("too many redirects")
	return nil
}

// signIn runs the whole browser part and returns the code.
func (o *opTest) signIn(f flow, user string) string {
	o.t.Helper()
	id := o.loginPage(o.browser, f)
	resp, page := o.submit(o.browser, id, user, "pw-"+user)
	q := o.followToClient(o.browser, orFail(o.t, resp, page))
	if q.Get("state") != f.state || q.Get("code") == "" {
		o.t.Fatalf("callback query %v", q)
	}
	return q.Get("code")
}

func orFail(t *testing.T, resp *http.Response, page string) *http.Response {
	t.Helper()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("login failed: %d\n%s", resp.StatusCode, page)
	}
	return resp
}

// token posts to the token endpoint (client_secret_basic, or _post when post).
func (o *opTest) token(form url.Values, post bool) (int, map[string]any) {
	o.t.Helper()
	if post {
		form.Set("client_id", clientID)
		form.Set("client_secret", clientSecret)
	}
	req, _ := http.NewRequest("POST", o.issuer+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if !post {
		req.SetBasicAuth(clientID, clientSecret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		o.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func (o *opTest) exchange(f flow, code string, post bool) map[string]any {
	o.t.Helper()
	status, out := o.token(url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {redirectURI}, "code_verifier": {f.verifier}}, post)
	if status != 200 {
		o.t.Fatalf("code exchange: %d %v", status, out)
	}
	return out
}

// verify checks an ID token as a relying party would; nonce "" skips the nonce check.
func (o *opTest) verify(idToken, nonce string) (*oidc.IDTokenClaims, error) {
	var opts []rp.VerifierOption
	if nonce != "" {
		opts = append(opts, rp.WithNonce(func(context.Context) string { return nonce }))
	}
	v := rp.NewIDTokenVerifier(o.issuer, clientID, rp.NewRemoteKeySet(http.DefaultClient, o.issuer+"/keys"), opts...)
	return rp.VerifyIDToken[*oidc.IDTokenClaims](context.Background(), idToken, v)
}

func (o *opTest) mustVerify(idToken, nonce string) *oidc.IDTokenClaims {
	o.t.Helper()
	c, err := o.verify(idToken, nonce)
	if err != nil {
		o.t.Fatalf("ID token refused: %v", err)
	}
	return c
}

func groupsOf(t *testing.T, claims map[string]any) []string {
	t.Helper()
	raw, ok := claims["groups"].([]any)
	if !ok {
		t.Fatalf("no groups array in %v", claims)
	}
	out := []string{}
	for _, g := range raw {
		out = append(out, g.(string))
	}
	return out
}

func (o *opTest) userinfo(accessToken string) (int, map[string]any) {
	req, _ := http.NewRequest("GET", o.issuer+"/userinfo", nil)
	req.Header.Set("Authorization", "Bearer "+accessToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		o.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func (o *opTest) refresh(rt string, post bool) (int, map[string]any) {
	return o.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}, post)
}

func TestCodeFlowClaimsRefreshAndEndSessions(t *testing.T) {
	o := start(t)
	f := newFlow()
	tok := o.exchange(f, o.signIn(f, "ada"), false)
	c := o.mustVerify(tok["id_token"].(string), f.nonce)
	if c.Subject != "u-ada" || c.PreferredUsername != "ada" || c.Email != "ada@example.test" ||
		!bool(c.EmailVerified) || c.Name != "User ada" || c.Nonce != f.nonce {
		t.Fatalf("claims %+v", c)
	}
	if g := groupsOf(t, c.Claims); !slices.Equal(g, []string{"team-a"}) {
		t.Fatalf("groups %v", g)
	}
	if tok["refresh_token"] == nil || tok["expires_in"].(float64) > 300 {
		t.Fatalf("token response %v", tok)
	}
	status, info := o.userinfo(tok["access_token"].(string))
	if status != 200 || info["sub"] != "u-ada" || info["preferred_username"] != "ada" || len(groupsOf(t, info)) != 1 {
		t.Fatalf("userinfo %d %v", status, info)
	}

	// Groups changed: the refreshed ID token says so. Refresh by client_secret_post.
	o.putUser("ada", []string{"team-a", "admins"}, false)
	status, ref := o.refresh(tok["refresh_token"].(string), true)
	if status != 200 {
		t.Fatalf("refresh: %d %v", status, ref)
	}
	c2 := o.mustVerify(ref["id_token"].(string), "")
	if g := groupsOf(t, c2.Claims); !slices.Equal(g, []string{"team-a", "admins"}) || c2.Subject != "u-ada" {
		t.Fatalf("refreshed claims %+v", c2)
	}
	// Rotation: the old refresh token is spent.
	if status, out := o.refresh(tok["refresh_token"].(string), false); status != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("reused refresh token: %d %v", status, out)
	}

	// end-sessions: refresh is invalid_grant, userinfo 401.
	o.control("POST", "/_control/users/ada/end-sessions", nil, 200)
	if status, out := o.refresh(ref["refresh_token"].(string), false); status != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("refresh after end-sessions: %d %v", status, out)
	}
	if status, _ := o.userinfo(ref["access_token"].(string)); status != 401 {
		t.Fatalf("userinfo after end-sessions: %d", status)
	}
	o.control("POST", "/_control/users/nobody/end-sessions", nil, 404)
}

func TestLoginFailuresPKCEAndDisabledRefresh(t *testing.T) {
	o := start(t)
	o.putUser("bob", nil, true)
	f := newFlow()
	id := o.loginPage(o.browser, f)
	if resp, page := o.submit(o.browser, id, "ada", "wrong"); resp.StatusCode != 200 || !strings.Contains(page, "invalid username or password") {
		t.Fatalf("wrong password: %d\n%s", resp.StatusCode, page)
	}
	if resp, page := o.submit(o.browser, id, "bob", "pw-bob"); resp.StatusCode != 200 || !strings.Contains(page, "user is disabled") {
		t.Fatalf("disabled user: %d\n%s", resp.StatusCode, page)
	}
	resp, page := o.submit(o.browser, id, "ada", "pw-ada")
	code := o.followToClient(o.browser, orFail(t, resp, page)).Get("code")

	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI}}
	if status, out := o.token(form, false); status != 400 || out["error"] != "invalid_request" {
		t.Fatalf("no verifier: %d %v", status, out)
	}
	form.Set("code_verifier", "not-the-verifier-not-the-verifier-not-the-verifier")
	if status, out := o.token(form, false); status != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("wrong verifier: %d %v", status, out)
	}
	tok := o.exchange(f, code, true)
	// The code is spent.
	form.Set("code_verifier", f.verifier)
	if status, out := o.token(form, false); status != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("code reuse: %d %v", status, out)
	}

	// An empty groups list is still a groups claim; a disabled user cannot refresh.
	o.putUser("ada", nil, false)
	status, ref := o.refresh(tok["refresh_token"].(string), false)
	if status != 200 || len(groupsOf(t, o.mustVerify(ref["id_token"].(string), "").Claims)) != 0 {
		t.Fatalf("refresh: %d %v", status, ref)
	}
	o.putUser("ada", nil, true)
	if status, out := o.refresh(ref["refresh_token"].(string), false); status != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("disabled refresh: %d %v", status, out)
	}
	if status, _ := o.userinfo(ref["access_token"].(string)); status != 401 {
		t.Fatalf("disabled userinfo: %d", status)
	}
}

func TestBrowserSessionAndLogout(t *testing.T) {
	o := start(t)
	jar, _ := cookiejar.New(nil)
	browser := noRedirects(jar)
	f := newFlow()
	id := o.loginPage(browser, f)
	resp, page := o.submit(browser, id, "ada", "pw-ada")
	tok := o.exchange(f, o.followToClient(browser, orFail(t, resp, page)).Get("code"), false)

	// Signed in: the next authorize skips the form.
	f2 := newFlow()
	resp, _ = o.get(browser, f2.authorizeURL(o.issuer, nil))
	resp, _ = o.get(browser, resp.Header.Get("Location"))
	if q := o.followToClient(browser, resp); q.Get("code") == "" {
		t.Fatalf("no silent sign-in: %v", q)
	}

	// RP-initiated logout.
	q := url.Values{"id_token_hint": {tok["id_token"].(string)}, "post_logout_redirect_uri": {afterLogout}, "state": {"bye"}}
	resp, body := o.get(browser, "/end_session?"+q.Encode())
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || loc != afterLogout+"?state=bye" {
		t.Fatalf("end_session: %d %q %s", resp.StatusCode, loc, body)
	}
	if status, out := o.refresh(tok["refresh_token"].(string), false); status != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("refresh after logout: %d %v", status, out)
	}
	o.loginPage(browser, newFlow()) // the form again
}

func TestTamperKinds(t *testing.T) {
	o := start(t)
	o.control("POST", "/_control/tamper-next", map[string]any{"kind": "old-key"}, 409)
	o.control("POST", "/_control/tamper-next", map[string]any{"kind": "bogus"}, 400)
	first := o.activeKid()

	// keepOld: both keys published, the new one signs.
	rot := o.control("POST", "/_control/rotate-keys", map[string]any{"keepOld": true}, 200)
	if rot["retiredKid"] != first || !slices.Equal(o.jwksKids(), []string{first, rot["activeKid"].(string)}) {
		t.Fatalf("keepOld rotation %v, jwks %v", rot, o.jwksKids())
	}
	rot = o.control("POST", "/_control/rotate-keys", map[string]any{"keepOld": false}, 200)
	active, retired := rot["activeKid"].(string), rot["retiredKid"].(string)
	if !slices.Equal(o.jwksKids(), []string{active}) {
		t.Fatalf("jwks after rotation %v, want only %s", o.jwksKids(), active)
	}

	cases := []struct {
		kind, kid string
		refused   error
		check     func(map[string]any) bool
	}{
		{"wrong-aud", active, oidc.ErrAudience, func(c map[string]any) bool { return slices.Equal(c["aud"].([]any), []any{"someone-else"}) }},
		{"expired", active, oidc.ErrExpired, func(c map[string]any) bool {
			now := float64(time.Now().Unix())
			return c["exp"].(float64) <= now-590 && c["iat"].(float64) <= now-1190
		}},
		{"no-nonce", active, oidc.ErrNonceInvalid, func(c map[string]any) bool { _, ok := c["nonce"]; return !ok }},
		{"wrong-iss", active, oidc.ErrIssuerInvalid, func(c map[string]any) bool { return c["iss"] == "http://issuer.invalid" }},
		{"foreign-key", active, nil, func(c map[string]any) bool { return c["sub"] == "u-ada" }},
		{"old-key", retired, nil, func(c map[string]any) bool { return c["sub"] == "u-ada" }},
	}
	for _, tc := range cases {
		o.control("POST", "/_control/tamper-next", map[string]any{"kind": tc.kind}, 200)
		f := newFlow()
		idToken := o.exchange(f, o.signIn(f, "ada"), false)["id_token"].(string)
		claims, kid := decodeJWT(t, idToken)
		if kid != tc.kid || !tc.check(claims) {
			t.Errorf("%s: kid %s (want %s), claims %v", tc.kind, kid, tc.kid, claims)
		}
		_, err := o.verify(idToken, f.nonce)
		if err == nil || (tc.refused != nil && !errors.Is(err, tc.refused)) {
			t.Errorf("%s: verifier said %v, want %v", tc.kind, err, tc.refused)
		}
		// Once only: the next sign-in is clean.
		f = newFlow()
		o.mustVerify(o.exchange(f, o.signIn(f, "ada"), false)["id_token"].(string), f.nonce)
	}
}

func (o *opTest) jwks() []map[string]any {
	resp, body := o.get(http.DefaultClient, "/keys")
	var set struct{ Keys []map[string]any }
	if err := json.Unmarshal([]byte(body), &set); err != nil || resp.StatusCode != 200 {
		o.t.Fatalf("jwks: %d %s", resp.StatusCode, body)
	}
	return set.Keys
}

func (o *opTest) jwksKids() []string {
	var kids []string
	for _, k := range o.jwks() {
		kids = append(kids, k["kid"].(string))
	}
	return kids
}

func (o *opTest) activeKid() string {
	kids := o.jwksKids()
	if len(kids) != 1 {
		o.t.Fatalf("jwks %v", kids)
	}
	return kids[0]
}

func decodeJWT(t *testing.T, jwt string) (map[string]any, string) {
	t.Helper()
	parts := strings.Split(jwt, ".")
	var header struct{ Kid string }
	var claims map[string]any
	h, _ := base64.RawURLEncoding.DecodeString(parts[0])
	p, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if json.Unmarshal(h, &header) != nil || json.Unmarshal(p, &claims) != nil {
		t.Fatalf("undecodable JWT %s", jwt)
	}
	return claims, header.Kid
}

func TestControlErrors(t *testing.T) {
	o := start(t)
	o.control("PUT", "/_control/users/ada", map[string]any{"pasword": "typo"}, 400)
	o.control("PUT", "/_control/clients/x", map[string]any{"secret": "s"}, 400)
	o.control("GET", "/_control/nothing", nil, 404)
	o.control("GET", "/_control/healthz", nil, 200)
}

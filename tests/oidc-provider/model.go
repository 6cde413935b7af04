// The provider's records: users and clients as the control API registers them, and
// the sign-in requests and tokens the op library asks the storage to keep. Client and
// authRequest implement the op library's Client and AuthRequest interfaces.
package main

import (
	"net/url"
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Lifetimes of what the provider issues.
const (
	idTokenLifetime      = 5 * time.Minute
	accessTokenLifetime  = 5 * time.Minute
	refreshTokenLifetime = 8 * time.Hour
)

// User is one account that can sign in. Its subject is derived from the username, so
// replacing a user keeps the same `sub`.
type User struct {
	Username string
	Password string
	Email    string
	Name     string
	Groups   []string
	Disabled bool
}

// Subject is the stable user id the tokens carry in `sub`.
func (u *User) Subject() string { return subjectPrefix + u.Username }

const subjectPrefix = "u-"

// Client is a confidential web client (authorization code + refresh token grants),
// authenticating with its secret by HTTP Basic or in the form body.
type Client struct {
	ID                  string
	Secret              string
	Redirects           []string
	PostLogoutRedirects []string
}

var _ op.Client = (*Client)(nil)

func (c *Client) GetID() string                       { return c.ID }
func (c *Client) RedirectURIs() []string              { return c.Redirects }
func (c *Client) PostLogoutRedirectURIs() []string    { return c.PostLogoutRedirects }
func (c *Client) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }

// AuthMethod is Basic; the op library also accepts the secret in the form body
// (client_secret_post) for such a client when the provider enables AuthMethodPost.
func (c *Client) AuthMethod() oidc.AuthMethod { return oidc.AuthMethodBasic }
func (c *Client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *Client) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken}
}

// LoginURL is where the authorize endpoint sends the browser for a new sign-in request.
func (c *Client) LoginURL(id string) string            { return "/login?authRequestID=" + url.QueryEscape(id) }
func (c *Client) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeBearer }
func (c *Client) IDTokenLifetime() time.Duration       { return idTokenLifetime }
func (c *Client) DevMode() bool                        { return false }
func (c *Client) ClockSkew() time.Duration             { return 0 }
func (c *Client) IsScopeAllowed(string) bool           { return true }
func (c *Client) IDTokenUserinfoClaimsAssertion() bool { return true }
func (c *Client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *Client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// authRequest is one authorize request, from the authorize endpoint until its code is
// exchanged. The login page fills in the user (subject) and marks it done.
type authRequest struct {
	ID            string
	ClientID      string
	RedirectURI   string
	State         string
	Nonce         string
	Scopes        []string
	Prompt        []string
	ResponseType  oidc.ResponseType
	ResponseMode  oidc.ResponseMode
	CodeChallenge *oidc.CodeChallenge
	Created       time.Time

	Subject  string
	AuthTime time.Time
	done     bool
}

var _ op.AuthRequest = (*authRequest)(nil)

func (a *authRequest) GetID() string                         { return a.ID }
func (a *authRequest) GetACR() string                        { return "" }
func (a *authRequest) GetAudience() []string                 { return []string{a.ClientID} }
func (a *authRequest) GetAuthTime() time.Time                { return a.AuthTime }
func (a *authRequest) GetClientID() string                   { return a.ClientID }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge { return a.CodeChallenge }
func (a *authRequest) GetNonce() string                      { return a.Nonce }
func (a *authRequest) GetRedirectURI() string                { return a.RedirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType    { return a.ResponseType }
func (a *authRequest) GetResponseMode() oidc.ResponseMode    { return a.ResponseMode }
func (a *authRequest) GetScopes() []string                   { return a.Scopes }
func (a *authRequest) GetState() string                      { return a.State }
func (a *authRequest) GetSubject() string                    { return a.Subject }
func (a *authRequest) Done() bool                            { return a.done }
func (a *authRequest) GetAMR() []string {
	if a.done {
		return []string{"pwd"}
	}
	return nil
}

// forcesLogin says the client asked for the form even when the browser has a session.
func (a *authRequest) forcesLogin() bool { return slices.Contains(a.Prompt, oidc.PromptLogin) }

// accessToken is an issued (opaque) access token; the bearer string the client holds
// is the op library's encryption of "ID:subject".
type accessToken struct {
	ID             string
	ClientID       string
	Subject        string
	RefreshTokenID string
	Audience       []string
	Scopes         []string
	Expiration     time.Time
}

// refreshToken is an issued refresh token; its ID is also the token string. Each use
// replaces it with a new one (rotation).
type refreshToken struct {
	ID            string
	ClientID      string
	Subject       string
	AuthTime      time.Time
	AMR           []string
	Audience      []string
	Scopes        []string
	Expiration    time.Time
	AccessTokenID string
}

// refreshRequest is a refresh token presented at the token endpoint: a copy of the
// stored one, so narrowing its scopes does not touch the record until it is rotated.
type refreshRequest struct{ refreshToken }

var _ op.RefreshTokenRequest = (*refreshRequest)(nil)

func (r *refreshRequest) GetAMR() []string            { return r.AMR }
func (r *refreshRequest) GetAudience() []string       { return r.Audience }
func (r *refreshRequest) GetAuthTime() time.Time      { return r.AuthTime }
func (r *refreshRequest) GetClientID() string         { return r.ClientID }
func (r *refreshRequest) GetScopes() []string         { return r.Scopes }
func (r *refreshRequest) GetSubject() string          { return r.Subject }
func (r *refreshRequest) SetCurrentScopes(s []string) { r.Scopes = s }

// The op.OPStorage half of the store: clients and their secrets, and the user claims
// every ID token and userinfo answer carries (sub, preferred_username, email,
// email_verified, name, groups), always read from the user as it is now. Also the
// lookups the login page and the control API use.
package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

func (s *Storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok {
		return nil, errors.New("unknown client")
	}
	return c, nil
}

func (s *Storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok || subtle.ConstantTimeCompare([]byte(c.Secret), []byte(secret)) != 1 {
		return errors.New("wrong client id or secret")
	}
	return nil
}

// SetUserinfoFromScopes fills the ID token's claims: all of them, whatever the scopes.
func (s *Storage) SetUserinfoFromScopes(_ context.Context, info *oidc.UserInfo, subject, _ string, _ []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fillClaims(info, subject)
}

// SetUserinfoFromToken answers the userinfo endpoint for a live access token.
func (s *Storage) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, tokenID, subject, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.accessTokens[tokenID]
	if !ok || t.Subject != subject || time.Now().After(t.Expiration) {
		return errors.New("access token invalid, expired or revoked")
	}
	return s.fillClaims(info, subject)
}

func (s *Storage) SetIntrospectionFromToken(_ context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, clientID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.accessTokens[tokenID]
	if !ok || t.Subject != subject || time.Now().After(t.Expiration) || !slices.Contains(t.Audience, clientID) {
		return errors.New("access token invalid for this client")
	}
	info := new(oidc.UserInfo)
	if err := s.fillClaims(info, subject); err != nil {
		return err
	}
	resp.SetUserInfo(info)
	resp.Scope, resp.ClientID, resp.Expiration = t.Scopes, t.ClientID, oidc.FromTime(t.Expiration)
	return nil
}

// fillClaims copies the user's current claims; `groups` is always present. The
// caller holds the lock.
func (s *Storage) fillClaims(info *oidc.UserInfo, subject string) error {
	u := s.userBySubject(subject)
	if u == nil {
		return errors.New("user not found")
	}
	info.Subject = u.Subject()
	info.PreferredUsername = u.Username
	info.Name = u.Name
	info.Email = u.Email
	info.EmailVerified = oidc.Bool(true)
	info.AppendClaims("groups", append([]string{}, u.Groups...))
	return nil
}

// GetPrivateClaimsFromScopes is only asked for JWT access tokens, which are not issued.
func (s *Storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (s *Storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("JWT profile grants are not supported")
}

func (s *Storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("JWT profile grants are not supported")
}

// userBySubject finds a user by `sub`; the caller holds the lock.
func (s *Storage) userBySubject(subject string) *User {
	name, ok := strings.CutPrefix(subject, subjectPrefix)
	if !ok {
		return nil
	}
	return s.users[name]
}

// accessTokenLive says whether an access token id is still issued and unexpired, and
// its user still enabled.
func (s *Storage) accessTokenLive(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.accessTokens[id]
	if !ok || time.Now().After(t.Expiration) {
		return false
	}
	u := s.userBySubject(t.Subject)
	return u != nil && !u.Disabled
}

// Login outcomes the page shows.
var (
	errBadCredentials = errors.New("invalid username or password")
	errUserDisabled   = errors.New("user is disabled")
)

// checkPassword returns the user's subject, or why the sign-in fails. A disabled
// user is told so only after the right password.
func (s *Storage) checkPassword(username, password string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[username]
	if !ok || subtle.ConstantTimeCompare([]byte(u.Password), []byte(password)) != 1 {
		return "", errBadCredentials
	}
	if u.Disabled {
		return "", errUserDisabled
	}
	return u.Subject(), nil
}

// startBrowserSession records a signed-in browser; returns the cookie value.
func (s *Storage) startBrowserSession(subject string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := newID()
	s.browserSessions[id] = subject
	return id
}

// browserSessionUser is the subject of a live browser session whose user is enabled.
func (s *Storage) browserSessionUser(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	subject, ok := s.browserSessions[id]
	if !ok {
		return "", false
	}
	u := s.userBySubject(subject)
	return subject, u != nil && !u.Disabled
}

func (s *Storage) endBrowserSession(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.browserSessions, id)
}

// putClient registers or replaces a client.
func (s *Storage) putClient(c *Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[c.ID] = c
}

// putUser creates or replaces a user; the subject stays the same.
func (s *Storage) putUser(u *User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[u.Username] = u
}

// endSessions revokes all of a user's tokens and browser sessions; false when there
// is no such user.
func (s *Storage) endSessions(username string) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[username]
	if !ok {
		return 0, false
	}
	return s.revokeLocked(u.Subject(), ""), true
}

// The in-memory store behind the op library: sign-in requests, codes, access and
// refresh tokens, browser sessions, users and clients, all under one mutex. This file
// has the op.AuthStorage half (requests, codes, tokens, keys); claims.go has the rest.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Storage implements op.Storage.
type Storage struct {
	mu              sync.Mutex
	users           map[string]*User // by username
	clients         map[string]*Client
	authRequests    map[string]*authRequest
	codes           map[string]string // code -> auth request id
	accessTokens    map[string]*accessToken
	refreshTokens   map[string]*refreshToken
	browserSessions map[string]string // session cookie value -> subject
	keys            *keyRing
}

var _ op.Storage = (*Storage)(nil)

func newStorage(keys *keyRing) *Storage {
	return &Storage{
		users:           map[string]*User{},
		clients:         map[string]*Client{},
		authRequests:    map[string]*authRequest{},
		codes:           map[string]string{},
		accessTokens:    map[string]*accessToken{},
		refreshTokens:   map[string]*refreshToken{},
		browserSessions: map[string]string{},
		keys:            keys,
	}
}

// newID is a random identifier for requests, tokens and sessions.
func newID() string { return rand.Text() }

func (s *Storage) CreateAuthRequest(_ context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	// No login page can run for prompt=none; the client gets login_required.
	if len(req.Prompt) == 1 && req.Prompt[0] == oidc.PromptNone {
		return nil, oidc.ErrLoginRequired()
	}
	a := &authRequest{
		ID:           newID(),
		ClientID:     req.ClientID,
		RedirectURI:  req.RedirectURI,
		State:        req.State,
		Nonce:        req.Nonce,
		Scopes:       req.Scopes,
		Prompt:       req.Prompt,
		ResponseType: req.ResponseType,
		ResponseMode: req.ResponseMode,
		Created:      time.Now(),
	}
	if req.CodeChallenge != "" {
		// The method passes through as sent, so the library refuses one it lacks.
		a.CodeChallenge = &oidc.CodeChallenge{Challenge: req.CodeChallenge, Method: req.CodeChallengeMethod}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authRequests[a.ID] = a
	return a, nil
}

func (s *Storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.authRequests[id]
	if !ok {
		return nil, errors.New("unknown or finished sign-in request")
	}
	return a, nil
}

func (s *Storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	id, ok := s.codes[code]
	s.mu.Unlock()
	if !ok {
		return nil, errors.New("invalid or used code")
	}
	return s.AuthRequestByID(ctx, id)
}

func (s *Storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	return nil
}

// DeleteAuthRequest runs once the code was exchanged: the code cannot be used again.
func (s *Storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.authRequests, id)
	for code, rid := range s.codes {
		if rid == id {
			delete(s.codes, code)
		}
	}
	return nil
}

// completeLogin marks a sign-in request as done by the given user.
func (s *Storage) completeLogin(id, subject string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.authRequests[id]
	if !ok {
		return errors.New("unknown or finished sign-in request")
	}
	a.Subject, a.AuthTime, a.done = subject, time.Now(), true
	return nil
}

// clientOf names the client a token request is for.
func clientOf(req op.TokenRequest) string {
	switch r := req.(type) {
	case *authRequest:
		return r.ClientID
	case *refreshRequest:
		return r.ClientID
	}
	return ""
}

// newAccessToken records an access token; the caller holds the lock.
func (s *Storage) newAccessToken(clientID, refreshID string, req op.TokenRequest) *accessToken {
	t := &accessToken{
		ID:             newID(),
		ClientID:       clientID,
		Subject:        req.GetSubject(),
		RefreshTokenID: refreshID,
		Audience:       req.GetAudience(),
		Scopes:         req.GetScopes(),
		Expiration:     time.Now().Add(accessTokenLifetime),
	}
	s.accessTokens[t.ID] = t
	return t
}

func (s *Storage) CreateAccessToken(_ context.Context, req op.TokenRequest) (string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.newAccessToken(clientOf(req), "", req)
	return t.ID, t.Expiration, nil
}

// CreateAccessAndRefreshTokens issues a refresh token on a code exchange (scope
// offline_access), or rotates the presented one on a refresh.
func (s *Storage) CreateAccessAndRefreshTokens(_ context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	refresh := &refreshToken{ID: newID(), Expiration: time.Now().Add(refreshTokenLifetime)}
	switch r := req.(type) {
	case *authRequest:
		refresh.ClientID, refresh.AuthTime, refresh.AMR = r.ClientID, r.AuthTime, r.GetAMR()
	case *refreshRequest:
		old, ok := s.refreshTokens[current]
		if !ok {
			return "", "", time.Time{}, oidc.ErrInvalidGrant().WithDescription("refresh token revoked")
		}
		delete(s.refreshTokens, current)
		delete(s.accessTokens, old.AccessTokenID)
		refresh.ClientID, refresh.AuthTime, refresh.AMR = r.ClientID, r.AuthTime, r.AMR
	default:
		return "", "", time.Time{}, fmt.Errorf("unsupported token request %T", req)
	}
	refresh.Subject, refresh.Audience, refresh.Scopes = req.GetSubject(), req.GetAudience(), req.GetScopes()
	access := s.newAccessToken(refresh.ClientID, refresh.ID, req)
	refresh.AccessTokenID = access.ID
	s.refreshTokens[refresh.ID] = refresh
	return access.ID, refresh.ID, access.Expiration, nil
}

// TokenRequestByRefreshToken refuses (so the token endpoint answers invalid_grant) a
// token that is unknown, expired, revoked, or whose user is gone or disabled.
func (s *Storage) TokenRequestByRefreshToken(_ context.Context, token string) (op.RefreshTokenRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.refreshTokens[token]
	if !ok {
		return nil, errors.New("unknown or revoked refresh token")
	}
	if time.Now().After(t.Expiration) {
		return nil, errors.New("expired refresh token")
	}
	u := s.userBySubject(t.Subject)
	if u == nil || u.Disabled {
		return nil, errors.New("user is disabled or gone")
	}
	return &refreshRequest{*t}, nil
}

// TerminateSession (end_session) ends the user's browser sessions and revokes the
// tokens the user holds at that client.
func (s *Storage) TerminateSession(_ context.Context, subject, clientID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revokeLocked(subject, clientID)
	return nil
}

// revokeLocked drops the subject's sessions and tokens (at clientID, or all when
// empty); returns how many tokens went. The caller holds the lock.
func (s *Storage) revokeLocked(subject, clientID string) int {
	n := 0
	for id, sub := range s.browserSessions {
		if sub == subject {
			delete(s.browserSessions, id)
		}
	}
	for id, t := range s.accessTokens {
		if t.Subject == subject && (clientID == "" || t.ClientID == clientID) {
			delete(s.accessTokens, id)
			n++
		}
	}
	for id, t := range s.refreshTokens {
		if t.Subject == subject && (clientID == "" || t.ClientID == clientID) {
			delete(s.refreshTokens, id)
			n++
		}
	}
	return n
}

func (s *Storage) GetRefreshTokenInfo(_ context.Context, _ string, token string) (string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.refreshTokens[token]
	if !ok {
		return "", "", op.ErrInvalidRefreshToken
	}
	return t.Subject, t.ID, nil
}

// RevokeToken (revocation endpoint) drops one access token, or one refresh token and
// the access token issued with it.
func (s *Storage) RevokeToken(_ context.Context, tokenOrID, _ string, clientID string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.accessTokens[tokenOrID]; ok {
		if t.ClientID != clientID {
			return oidc.ErrInvalidClient().WithDescription("token was not issued to this client")
		}
		delete(s.accessTokens, tokenOrID)
		return nil
	}
	if t, ok := s.refreshTokens[tokenOrID]; ok {
		if t.ClientID != clientID {
			return oidc.ErrInvalidClient().WithDescription("token was not issued to this client")
		}
		delete(s.refreshTokens, tokenOrID)
		delete(s.accessTokens, t.AccessTokenID)
	}
	// An unknown token is already as revoked as it can be.
	return nil
}

func (s *Storage) SigningKey(context.Context) (op.SigningKey, error) { return s.keys.Active(), nil }

func (s *Storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *Storage) KeySet(context.Context) ([]op.Key, error) { return s.keys.Published(), nil }

func (s *Storage) Health(context.Context) error { return nil }

// Signing keys: the active RSA key that signs every token, the keys the JWKS
// publishes, and the most recently retired key (kept privately for the `old-key`
// tamper). rotate-keys swaps in a fresh key.
package main

import (
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"slices"
	"strings"
	"sync"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// signingKey is a private RSA key with its kid; it is the op library's SigningKey.
type signingKey struct {
	kid     string
	private *rsa.PrivateKey
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *signingKey) Key() any                                    { return k.private }
func (k *signingKey) ID() string                                  { return k.kid }

// publicKey is the published half of a signing key; it is the op library's Key.
type publicKey struct{ *signingKey }

func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.private.PublicKey }

// newSigningKey makes a fresh 2048-bit RSA key with a random kid.
func newSigningKey() (*signingKey, error) {
	private, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	return &signingKey{kid: "k-" + strings.ToLower(rand.Text()[:12]), private: private}, nil
}

// keyRing holds the keys; safe for concurrent use.
type keyRing struct {
	mu        sync.Mutex
	active    *signingKey
	published []*signingKey
	retired   *signingKey
}

var errNoRetiredKey = errors.New("no key was retired yet: call rotate-keys first")

func newKeyRing() (*keyRing, error) {
	k, err := newSigningKey()
	if err != nil {
		return nil, err
	}
	return &keyRing{active: k, published: []*signingKey{k}}, nil
}

// Active is the key that signs new tokens.
func (r *keyRing) Active() *signingKey {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.active
}

// Retired is the key most recently replaced by a rotation (nil before the first one).
func (r *keyRing) Retired() (*signingKey, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.retired == nil {
		return nil, errNoRetiredKey
	}
	return r.retired, nil
}

// Published lists the public keys the JWKS serves.
func (r *keyRing) Published() []op.Key {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := make([]op.Key, 0, len(r.published))
	for _, k := range r.published {
		keys = append(keys, publicKey{k})
	}
	return keys
}

// Rotate makes a fresh key the active one; the previous active key becomes the
// retired one. keepOld keeps every key published so far in the JWKS beside the new
// one; otherwise the JWKS holds only the new key.
func (r *keyRing) Rotate(keepOld bool) (active, retired *signingKey, err error) {
	fresh, err := newSigningKey()
	if err != nil {
		return nil, nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retired = r.active
	r.active = fresh
	if keepOld {
		r.published = append(slices.Clone(r.published), fresh)
	} else {
		r.published = []*signingKey{fresh}
	}
	return r.active, r.retired, nil
}

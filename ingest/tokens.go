package ingest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/token"
)

// ErrUnauthenticated means no valid token was presented.
var ErrUnauthenticated = errors.New("unauthenticated")

// TokenPattern finds this registry's tokens in text (the secret scanner's rule, RE2); a
// match is a candidate that token.Valid confirms by its checksum. See package token.
const TokenPattern = token.Pattern

// tokenPrefix starts every token this registry issues, of either format.
const tokenPrefix = token.Prefix

// HashToken is how a token secret is stored: hex sha256.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// newSecret makes a token secret (package token's format) and its id. The id is drawn
// apart from the secret, so that the id shown in `registry token list` and in the audit
// log tells nothing of the secret; a token made before the checksummed format has the
// first 8 characters of its secret's body as its id.
func newSecret() (id, secret string, err error) {
	b := make([]byte, 5)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("ingest: token id: %w", err)
	}
	secret, err = token.New()
	if err != nil {
		return "", "", fmt.Errorf("ingest: %w", err)
	}
	return strings.ToLower(base32.StdEncoding.EncodeToString(b)), secret, nil
}

// TokenSpec describes a token to create.
type TokenSpec struct {
	Kind      string // admin | publisher | upload
	Publisher string
	Scope     []string
	Note      string
	TTL       time.Duration // 0: never expires
}

// CreateToken makes a token, stores its hash and returns the secret (shown once). A
// publisher token's publisher must be a publisher name (index.PublisherPattern), since no
// plugins.yaml could list any other among its owners.
func CreateToken(ctx context.Context, st TokenMaker, spec TokenSpec, actor string) (string, *store.Token, error) {
	if spec.Kind == "publisher" && !index.ValidPublisher(spec.Publisher) {
		return "", nil, refuseOne(ErrInvalid, "publish.token.publisher", "publisher", "the publisher %q (--publisher) is not a publisher name: it must match %s, as every owner in plugins.yaml does (rule registry.owners), so a token for it could never publish; give the owner name exactly as plugins.yaml lists it, e.g. --publisher acme", spec.Publisher, index.PublisherPattern)
	}
	id, secret, err := newSecret()
	if err != nil {
		return "", nil, err
	}
	t := &store.Token{ID: id, Kind: spec.Kind, Publisher: spec.Publisher, Scope: spec.Scope, Note: spec.Note}
	if spec.TTL > 0 {
		exp := time.Now().UTC().Add(spec.TTL).Truncate(time.Second)
		t.ExpiresAt = &exp
	}
	audit := store.AuditEntry{Actor: actor, Action: "token.create", Target: id, Outcome: "ok",
		Detail: map[string]any{"kind": spec.Kind, "publisher": spec.Publisher, "scope": spec.Scope}}
	if spec.Kind == "upload" {
		audit = store.AuditEntry{} // short-lived OIDC tokens are audited by the exchange
	}
	if err := st.CreateToken(ctx, t, HashToken(secret), audit); err != nil {
		return "", nil, err
	}
	return secret, t, nil
}

// Authenticator resolves bearer tokens to actors.
type Authenticator struct {
	store     TokenStore
	adminHash string // sha256 of REGISTRY_ADMIN_TOKEN, when set
	now       func() time.Time
}

// NewAuthenticator returns an Authenticator; adminSecret is REGISTRY_ADMIN_TOKEN ("" for none).
func NewAuthenticator(st TokenStore, adminSecret string) *Authenticator {
	a := &Authenticator{store: st, now: time.Now}
	if adminSecret != "" {
		a.adminHash = HashToken(adminSecret)
	}
	return a
}

// Authenticate resolves a token secret to an actor.
func (a *Authenticator) Authenticate(ctx context.Context, secret string) (Actor, error) {
	if secret == "" {
		return Actor{}, ErrUnauthenticated
	}
	hash := HashToken(secret)
	if a.adminHash != "" && subtle.ConstantTimeCompare([]byte(hash), []byte(a.adminHash)) == 1 {
		return Actor{Name: "admin", Admin: true, TokenID: "env"}, nil
	}
	t, err := a.store.TokenByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return Actor{}, ErrUnauthenticated
	}
	if err != nil {
		return Actor{}, err
	}
	if t.RevokedAt != nil || (t.ExpiresAt != nil && !a.now().Before(*t.ExpiresAt)) {
		return Actor{}, ErrUnauthenticated
	}
	switch t.Kind {
	case "admin":
		return Actor{Name: "admin:" + t.ID, Admin: true, TokenID: t.ID}, nil
	case "publisher":
		return Actor{Name: "publisher:" + t.Publisher, Publisher: t.Publisher, TokenID: t.ID}, nil
	default:
		return Actor{Name: "upload:" + t.Note, Scope: t.Scope, TokenID: t.ID}, nil
	}
}

// EnsureAdminToken creates an admin token on first start when none exists and no
// REGISTRY_ADMIN_TOKEN is set; it returns the secret to print once ("" when nothing was made).
func EnsureAdminToken(ctx context.Context, st AdminTokens, envSet bool) (string, error) {
	if envSet {
		return "", nil
	}
	n, err := st.CountTokens(ctx, "admin")
	if err != nil || n > 0 {
		return "", err
	}
	secret, _, err := CreateToken(ctx, st, TokenSpec{Kind: "admin", Note: "generated on first start"}, "registry")
	return secret, err
}

// ErrMalformedToken means a string handed to RevokeLeaked is not a registry token: not
// the current format with a valid checksum, nor the shape of an older token.
var ErrMalformedToken = errors.New("not a registry token")

// PublicRevokeActor is the audit actor of a revocation through POST /api/v1/tokens/revoke.
const PublicRevokeActor = "public revoke"

// Leaked is what RevokeLeaked did, for the log; the caller that reported the token is told
// none of it.
type Leaked int

// What RevokeLeaked did with a well-formed token.
const (
	LeakedUnknown  Leaked = iota // no such token (or already revoked): nothing to do
	LeakedRevoked                // a live token, revoked now
	LeakedEnvAdmin               // REGISTRY_ADMIN_TOKEN: configuration, which only the operator can rotate
)

// RevokeLeaked revokes the token whose secret this is, whoever asks: holding the secret
// is the proof that it leaked. A token that was live is revoked and audited (actor
// "public revoke", its id and kind, never the secret); an unknown or already revoked one
// changes nothing and is not audited, so that strangers cannot fill the audit log. The
// REGISTRY_ADMIN_TOKEN cannot be revoked from the store; reporting it is audited as
// refused so that the operator sees that it must be rotated.
func (a *Authenticator) RevokeLeaked(ctx context.Context, secret string) (Leaked, error) {
	hash := HashToken(secret)
	if a.adminHash != "" && subtle.ConstantTimeCompare([]byte(hash), []byte(a.adminHash)) == 1 {
		err := a.store.Audit(ctx, store.AuditEntry{Actor: PublicRevokeActor, Action: "token.revoke", Target: "env", Outcome: "refused",
			Detail: map[string]any{"kind": "admin", "reason": "REGISTRY_ADMIN_TOKEN was reported leaked; it is configuration: set a new one and restart"}})
		return LeakedEnvAdmin, err
	}
	if !token.Valid(secret) && !token.Legacy(secret) {
		return LeakedUnknown, ErrMalformedToken
	}
	t, err := a.store.TokenByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) || (err == nil && t.RevokedAt != nil) {
		return LeakedUnknown, nil
	}
	if err != nil {
		return LeakedUnknown, err
	}
	audit := store.AuditEntry{Actor: PublicRevokeActor, Action: "token.revoke", Target: t.ID, Outcome: "ok",
		Detail: map[string]any{"kind": t.Kind, "publisher": t.Publisher, "via": "POST /api/v1/tokens/revoke"}}
	switch err := a.store.RevokeToken(ctx, t.ID, audit); {
	case errors.Is(err, store.ErrNotFound):
		return LeakedUnknown, nil // revoked meanwhile
	case err != nil:
		return LeakedUnknown, err
	}
	return LeakedRevoked, nil
}

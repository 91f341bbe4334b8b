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

	"github.com/pluginyard/registry/store"
)

// ErrUnauthenticated means no valid token was presented.
var ErrUnauthenticated = errors.New("unauthenticated")

// tokenPrefix marks registry tokens so secret scanners can recognise a leaked one.
const tokenPrefix = "pyr_"

// HashToken is how a token secret is stored: hex sha256.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

func newSecret() (id, secret string, err error) {
	b := make([]byte, 25)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("ingest: token: %w", err)
	}
	enc := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
	return enc[:8], tokenPrefix + enc, nil
}

// TokenSpec describes a token to create.
type TokenSpec struct {
	Kind      string // admin | publisher | upload
	Publisher string
	Scope     []string
	Note      string
	TTL       time.Duration // 0: never expires
}

// CreateToken makes a token, stores its hash and returns the secret (shown once).
func CreateToken(ctx context.Context, st *store.Store, spec TokenSpec, actor string) (string, *store.Token, error) {
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
	store     *store.Store
	adminHash string // sha256 of REGISTRY_ADMIN_TOKEN, when set
	now       func() time.Time
}

// NewAuthenticator returns an Authenticator; adminSecret is REGISTRY_ADMIN_TOKEN ("" for none).
func NewAuthenticator(st *store.Store, adminSecret string) *Authenticator {
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
func EnsureAdminToken(ctx context.Context, st *store.Store, envSet bool) (string, error) {
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

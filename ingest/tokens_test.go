package ingest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/token"
)

func openTokenStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func TestCreateTokenHasTheCheckedFormat(t *testing.T) {
	ctx := context.Background()
	st := openTokenStore(t)
	secret, tok, err := ingest.CreateToken(ctx, st, ingest.TokenSpec{Kind: "publisher", Publisher: "acme"}, "cli")
	if err != nil {
		t.Fatal(err)
	}
	if !token.Valid(secret) {
		t.Errorf("CreateToken made %q, which is not a valid token of the current format", secret)
	}
	if len(tok.ID) != 8 || strings.Contains(secret, tok.ID) {
		t.Errorf("token id %q: want 8 characters that are not part of the secret %q", tok.ID, secret)
	}
	a, err := ingest.NewAuthenticator(st, "").Authenticate(ctx, secret)
	if err != nil || a.Publisher != "acme" {
		t.Errorf("Authenticate(new token) = %+v, %v; want publisher acme", a, err)
	}
}

// legacySecret is a token of the format before checksums, stored as such a token was.
const legacySecret = "pyr_abcdefghijklmnopqrstuvwxyz234567abcdefgh"

func storeLegacy(t *testing.T, st *store.Store) {
	t.Helper()
	tok := &store.Token{ID: "abcdefgh", Kind: "publisher", Publisher: "old"}
	if err := st.CreateToken(context.Background(), tok, ingest.HashToken(legacySecret), store.AuditEntry{}); err != nil {
		t.Fatal(err)
	}
}

func TestLegacyTokensKeepWorking(t *testing.T) {
	st := openTokenStore(t)
	storeLegacy(t, st)
	a, err := ingest.NewAuthenticator(st, "").Authenticate(context.Background(), legacySecret)
	if err != nil || a.Publisher != "old" {
		t.Errorf("Authenticate(legacy token) = %+v, %v; want publisher old", a, err)
	}
}

func TestRevokeLeaked(t *testing.T) {
	ctx := context.Background()
	st := openTokenStore(t)
	auth := ingest.NewAuthenticator(st, "env-admin-secret")
	secret, tok, err := ingest.CreateToken(ctx, st, ingest.TokenSpec{Kind: "publisher", Publisher: "acme"}, "cli")
	if err != nil {
		t.Fatal(err)
	}
	storeLegacy(t, st)
	unknown, err := token.New()
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name, secret string
		want         ingest.Leaked
		wantErr      error
		wantAudit    string // "actor action target outcome" of a new audit entry, "" for none
	}{
		{"a live token", secret, ingest.LeakedRevoked, nil, "public revoke token.revoke " + tok.ID + " ok"},
		{"the same again", secret, ingest.LeakedUnknown, nil, ""},
		{"an unknown token", unknown, ingest.LeakedUnknown, nil, ""},
		{"a legacy token", legacySecret, ingest.LeakedRevoked, nil, "public revoke token.revoke abcdefgh ok"},
		{"the admin token from the environment", "env-admin-secret", ingest.LeakedEnvAdmin, nil, "public revoke token.revoke env refused"},
		{"a bad checksum", secret[:len(secret)-1] + flip(secret[len(secret)-1]), ingest.LeakedUnknown, ingest.ErrMalformedToken, ""},
		{"not a token", "hello", ingest.LeakedUnknown, ingest.ErrMalformedToken, ""},
	}
	for _, s := range steps {
		before := auditCount(t, st)
		got, err := auth.RevokeLeaked(ctx, s.secret)
		if got != s.want || !errors.Is(err, s.wantErr) {
			t.Errorf("%s: RevokeLeaked = %v, %v; want %v, %v", s.name, got, err, s.want, s.wantErr)
		}
		log, lerr := st.AuditLog(ctx, 1, 0)
		if lerr != nil {
			t.Fatal(lerr)
		}
		switch added := auditCount(t, st) - before; {
		case s.wantAudit == "" && added != 0:
			t.Errorf("%s: %d audit entries added, want none (%+v)", s.name, added, log[0])
		case s.wantAudit != "" && (added != 1 || log[0].Actor+" "+log[0].Action+" "+log[0].Target+" "+log[0].Outcome != s.wantAudit):
			t.Errorf("%s: audit %+v (%d added), want one %q", s.name, log, added, s.wantAudit)
		case s.wantAudit != "":
			raw, _ := json.Marshal(log[0])
			if strings.Contains(string(raw), s.secret) {
				t.Errorf("%s: the audit entry holds the secret: %s", s.name, raw)
			}
		}
	}
	for _, revoked := range []string{secret, legacySecret} {
		if _, err := auth.Authenticate(ctx, revoked); !errors.Is(err, ingest.ErrUnauthenticated) {
			t.Errorf("Authenticate(revoked %q) = %v, want ErrUnauthenticated", revoked[:8], err)
		}
	}
	if _, err := auth.Authenticate(ctx, "env-admin-secret"); err != nil {
		t.Errorf("the environment's admin token stopped working: %v (only the operator can rotate it)", err)
	}
}

func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

func auditCount(t *testing.T, st *store.Store) int {
	t.Helper()
	log, err := st.AuditLog(context.Background(), 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(log)
}

// TestCreateTokenRefusesAnInvalidPublisher: a publisher no plugins.yaml could list among
// its owners is refused, and no token is stored for it.
func TestCreateTokenRefusesAnInvalidPublisher(t *testing.T) {
	ctx := context.Background()
	st := openTokenStore(t)
	for _, name := range []string{"al ice", "-alice", "alice/bob", "ålice", strings.Repeat("a", 65)} {
		_, _, err := ingest.CreateToken(ctx, st, ingest.TokenSpec{Kind: "publisher", Publisher: name}, "cli")
		var r *ingest.Refusal
		if !errors.As(err, &r) || !errors.Is(err, ingest.ErrInvalid) || !r.Problems.Has("publish.token.publisher") {
			t.Errorf("CreateToken(publisher %q) = %v; want a publish.token.publisher refusal", name, err)
			continue
		}
		for _, want := range []string{"--publisher", "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", "as plugins.yaml lists it"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("CreateToken(publisher %q): message %q does not name %q", name, err, want)
			}
		}
	}
	toks, err := st.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(toks) != 0 {
		t.Errorf("tokens stored for refused publishers: %+v", toks)
	}
	for _, name := range []string{"acme", "ACME", "a.b_c-d", strings.Repeat("a", 64)} {
		if _, _, err := ingest.CreateToken(ctx, st, ingest.TokenSpec{Kind: "publisher", Publisher: name}, "cli"); err != nil {
			t.Errorf("CreateToken(publisher %q) = %v; want a token", name, err)
		}
	}
}

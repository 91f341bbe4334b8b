package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pluginyard/registry/store"
)

// testTokens: a token is found by the hash of its secret as it was created, and by
// nothing else; hashes and ids are unique; a revoked token is still found, marked revoked
// (ingest refuses it by RevokedAt), no longer counted, and cannot be revoked twice.
func testTokens(t *testing.T, b Backend) {
	ctx := context.Background()
	admin := &store.Token{ID: "tok-admin", Kind: "admin", Note: "first admin"}
	pub := &store.Token{ID: "tok-pub", Kind: "publisher", Publisher: "acme", Scope: []string{"acme", "acme-extras"}}
	for _, tok := range []*store.Token{admin, pub} {
		audit := store.AuditEntry{Actor: "cli", Action: "token.create", Target: tok.ID, Outcome: "ok"}
		if err := b.CreateToken(ctx, tok, hash64(tok.ID), audit); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.TokenByHash(ctx, hash64("tok-pub"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(pub, got); diff != "" || got.CreatedAt.IsZero() {
		t.Errorf("TokenByHash (-created +found), created %v:\n%s", got.CreatedAt, diff)
	}
	if _, err := b.TokenByHash(ctx, hash64("never issued")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("TokenByHash of an unknown secret = %v, want ErrNotFound", err)
	}
	dupHash := b.CreateToken(ctx, &store.Token{ID: "tok-other", Kind: "admin"}, hash64("tok-admin"), store.AuditEntry{})
	dupID := b.CreateToken(ctx, &store.Token{ID: "tok-admin", Kind: "admin"}, hash64("another secret"), store.AuditEntry{})
	if dupHash == nil || dupID == nil {
		t.Errorf("a second token with the same hash: %v; with the same id: %v; want both refused", dupHash, dupID)
	}
	assertTokens(t, b, []string{"tok-admin", "tok-pub"}, map[string]int{"admin": 1, "publisher": 1})

	if err := b.RevokeToken(ctx, "tok-admin", store.AuditEntry{Actor: "cli", Action: "token.revoke", Target: "tok-admin", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	revoked, err := b.TokenByHash(ctx, hash64("tok-admin"))
	if err != nil {
		t.Fatalf("TokenByHash of a revoked token: %v, want it found and marked revoked", err)
	}
	if revoked.RevokedAt == nil || time.Since(*revoked.RevokedAt) > time.Hour || time.Until(*revoked.RevokedAt) > time.Minute {
		t.Errorf("revoked token's RevokedAt = %v, want about now", revoked.RevokedAt)
	}
	assertTokens(t, b, []string{"tok-admin", "tok-pub"}, map[string]int{"admin": 0, "publisher": 1})
	for _, id := range []string{"tok-admin", "no-such-token"} {
		if err := b.RevokeToken(ctx, id, okAudit); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("RevokeToken(%s) = %v, want ErrNotFound", id, err)
		}
	}
	var actions []string
	for _, e := range auditLog(t, b) {
		actions = append(actions, e.Action+" "+e.Target)
	}
	want := []string{"token.revoke tok-admin", "token.create tok-pub", "token.create tok-admin"}
	if diff := cmp.Diff(want, actions); diff != "" {
		t.Errorf("audit log, newest first (-want +got):\n%s", diff)
	}
}

// assertTokens checks the ids Tokens lists (in any order: tokens made in one second tie)
// and the live tokens counted per kind.
func assertTokens(tb testing.TB, b Backend, ids []string, counts map[string]int) {
	tb.Helper()
	ctx := context.Background()
	list, err := b.Tokens(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	var got []string
	for _, tok := range list {
		got = append(got, tok.ID)
	}
	if diff := cmp.Diff(ids, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		tb.Errorf("Tokens (-want +got):\n%s", diff)
	}
	for kind, want := range counts {
		if n, err := b.CountTokens(ctx, kind); err != nil || n != want {
			tb.Errorf("CountTokens(%s) = %d, %v; want %d", kind, n, err, want)
		}
	}
}

// testTokenExpiry: a token's expiry reads back to the second (ingest refuses a token at
// it); the token list leaves out expired upload tokens, not other expired tokens.
func testTokenExpiry(t *testing.T, b Backend) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	toks := []*store.Token{
		{ID: "upload-expired", Kind: "upload", Scope: []string{"acme"}, ExpiresAt: &past},
		{ID: "upload-live", Kind: "upload", Scope: []string{"acme"}, ExpiresAt: &future},
		{ID: "publisher-expired", Kind: "publisher", Publisher: "acme", ExpiresAt: &past},
		{ID: "admin-forever", Kind: "admin"},
	}
	for _, tok := range toks {
		if err := b.CreateToken(ctx, tok, hash64(tok.ID), okAudit); err != nil {
			t.Fatal(err)
		}
	}
	for _, tok := range toks {
		got, err := b.TokenByHash(ctx, hash64(tok.ID))
		if err != nil {
			t.Fatal(err)
		}
		if !cmp.Equal(tok.ExpiresAt, got.ExpiresAt) {
			t.Errorf("%s: ExpiresAt %v, want %v", tok.ID, got.ExpiresAt, tok.ExpiresAt)
		}
	}
	list, err := b.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tok := range list {
		ids = append(ids, tok.ID)
	}
	slices.Sort(ids)
	if diff := cmp.Diff([]string{"admin-forever", "publisher-expired", "upload-live"}, ids); diff != "" {
		t.Errorf("Tokens, without expired upload tokens (-want +got):\n%s", diff)
	}
	// Live means neither revoked nor expired: an expired admin token must not stop a start
	// from making a new one.
	adminExpired := &store.Token{ID: "admin-expired", Kind: "admin", ExpiresAt: &past}
	if err := b.CreateToken(ctx, adminExpired, hash64(adminExpired.ID), okAudit); err != nil {
		t.Fatal(err)
	}
	for kind, want := range map[string]int{"admin": 1, "publisher": 0, "upload": 1} {
		if n, err := b.CountTokens(ctx, kind); err != nil || n != want {
			t.Errorf("CountTokens(%s) = %d, %v; want %d live", kind, n, err, want)
		}
	}
}

// testOIDCReplay: an OIDC token id is accepted once per issuer until it expires; a replay
// before then is ErrConflict, also when writers race with it; once expired it is
// forgotten.
func testOIDCReplay(t *testing.T, b Backend) {
	ctx := context.Background()
	t0 := time.Date(2026, 9, 18, 6, 0, 0, 0, time.UTC)
	const iss = "https://token.actions.githubusercontent.com"
	steps := []struct {
		issuer, jti string
		exp, now    time.Time
		want        error
	}{
		{iss, "a", t0.Add(5 * time.Minute), t0, nil},
		{iss, "a", t0.Add(5 * time.Minute), t0.Add(time.Minute), store.ErrConflict},
		{"https://other.example", "a", t0.Add(5 * time.Minute), t0, nil},
		{iss, "b", t0.Add(time.Minute), t0, nil},
		{iss, "a", t0.Add(20 * time.Minute), t0.Add(10 * time.Minute), nil}, // "a" expired at t0+5m
		{iss, "a", t0.Add(20 * time.Minute), t0.Add(11 * time.Minute), store.ErrConflict},
	}
	for i, st := range steps {
		err := b.UseJTI(ctx, st.issuer, st.jti, st.exp, st.now)
		if (st.want == nil) != (err == nil) || !errors.Is(err, st.want) {
			t.Errorf("step %d: UseJTI(%s, %s, now %s) = %v, want %v", i, st.issuer, st.jti, st.now.Sub(t0), err, st.want)
		}
	}
	errs := race(racers, func(int) error { return b.UseJTI(ctx, iss, "raced", t0.Add(time.Hour), t0) })
	wins := 0
	for i, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("racer %d: %v, want nil or ErrConflict", i, err)
		}
	}
	if wins != 1 {
		t.Errorf("%d racers exchanged one token id, want 1", wins)
	}
}

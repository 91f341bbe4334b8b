package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
)

func TestUseJTI(t *testing.T) {
	ctx := context.Background()
	url, dir := storetest.NewDatabase(t)
	s, err := store.OpenURL(ctx, url, dir)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 9, 18, 6, 0, 0, 0, time.UTC)
	const iss = "https://token.actions.githubusercontent.com"
	steps := []struct {
		issuer, jti string
		exp, now    time.Time
		wantErr     error
	}{
		{iss, "a", t0.Add(5 * time.Minute), t0, nil},
		{iss, "a", t0.Add(5 * time.Minute), t0.Add(time.Minute), store.ErrConflict}, // a replay
		{"https://other.example", "a", t0.Add(5 * time.Minute), t0, nil},            // ids are per issuer
		{iss, "b", t0.Add(time.Minute), t0, nil},
	}
	for i, st := range steps {
		if err := s.UseJTI(ctx, st.issuer, st.jti, st.exp, st.now); !errors.Is(err, st.wantErr) || (st.wantErr == nil) != (err == nil) {
			t.Fatalf("step %d UseJTI(%s, %s): %v, want %v", i, st.issuer, st.jti, err, st.wantErr)
		}
	}
	if err := s.UseJTI(ctx, iss, strings.Repeat("x", store.MaxJTILen+1), t0.Add(time.Minute), t0); err == nil {
		t.Error("a jti over the length limit was kept")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// A restart (or another replica on the same database) still knows "a".
	s, err = store.OpenURL(ctx, url, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.UseJTI(ctx, iss, "a", t0.Add(5*time.Minute), t0.Add(2*time.Minute)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("replay after reopening: %v, want ErrConflict", err)
	}
	if got := jtiRows(t, s); got != 3 {
		t.Fatalf("%d rows before expiry, want 3", got)
	}
	// Once "b" (exp t0+1m) has expired, the next use deletes its row; "a" stays until t0+5m.
	if err := s.UseJTI(ctx, iss, "c", t0.Add(10*time.Minute), t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := jtiRows(t, s); got != 3 {
		t.Errorf("%d rows after b expired and c was used, want 3 (a twice, c)", got)
	}
	if err := s.UseJTI(ctx, iss, "d", t0.Add(20*time.Minute), t0.Add(15*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := jtiRows(t, s); got != 1 {
		t.Errorf("%d rows after every other token expired, want 1 (d)", got)
	}
}

// jtiRows counts the rows of oidc_jti, read straight from the database.
func jtiRows(t *testing.T, s *store.Store) int {
	t.Helper()
	var n int
	if err := store.RawDB(s).QueryRow("SELECT count(*) FROM oidc_jti").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

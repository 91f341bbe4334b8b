package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pluginyard/registry/store"
)

// testPins: the first pin of a subject stays in force whatever a later one says (trust on
// first use) until an admin deletes it, with an audit entry; then the next pin is the new
// first; deleting a pin that does not exist is ErrNotFound.
func testPins(t *testing.T, b Backend) {
	ctx := context.Background()
	if _, err := b.GetPin(ctx, "acme"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetPin before any pin = %v, want ErrNotFound", err)
	}
	first := store.Pin{Subject: "acme", Repository: "acme/acme", RepositoryID: "101", OwnerID: "201", Source: "sigstore"}
	other := store.Pin{Subject: "acme", Repository: "evil/acme", RepositoryID: "666", OwnerID: "667", Source: "oidc"}
	ignoreAt := cmpopts.IgnoreFields(store.Pin{}, "PinnedAt")
	got, err := b.PinOnFirstUse(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, *got, ignoreAt); diff != "" || time.Since(got.PinnedAt) > time.Hour {
		t.Errorf("first pin (-want +got), pinned at %v:\n%s", got.PinnedAt, diff)
	}
	if got, err := b.PinOnFirstUse(ctx, other); err != nil || !cmp.Equal(first, *got, ignoreAt) {
		t.Errorf("a second pin = %+v, %v; want the first still in force", got, err)
	}
	if got, err := b.GetPin(ctx, "acme"); err != nil || !cmp.Equal(first, *got, ignoreAt) {
		t.Errorf("GetPin = %+v, %v; want the first pin", got, err)
	}
	if err := b.DeletePin(ctx, "acme", store.AuditEntry{Actor: "admin", Action: "pin.reset", Target: "acme", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	if log := auditLog(t, b); len(log) != 1 || log[0].Action != "pin.reset" {
		t.Errorf("audit after the reset = %+v, want one pin.reset entry", log)
	}
	if _, err := b.GetPin(ctx, "acme"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetPin after the reset = %v, want ErrNotFound", err)
	}
	if err := b.DeletePin(ctx, "acme", okAudit); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a second reset = %v, want ErrNotFound", err)
	}
	if got, err := b.PinOnFirstUse(ctx, other); err != nil || !cmp.Equal(other, *got, ignoreAt) {
		t.Errorf("the pin after a reset = %+v, %v; want it in force", got, err)
	}
	if _, err := b.GetPin(ctx, "acme-other"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetPin of another subject = %v, want ErrNotFound", err)
	}
}

// testPinOneWinner: writers racing to pin one subject with different ids all get back the
// one pin that won.
func testPinOneWinner(t *testing.T, b Backend) {
	ctx := context.Background()
	got := make([]*store.Pin, racers)
	errs := race(racers, func(i int) error {
		var err error
		got[i], err = b.PinOnFirstUse(ctx, store.Pin{Subject: "acme", Repository: "acme/acme",
			RepositoryID: fmt.Sprint(1000 + i), OwnerID: fmt.Sprint(2000 + i), Source: "oidc"})
		return err
	})
	stored, err := b.GetPin(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		} else if got[i].RepositoryID != stored.RepositoryID || got[i].OwnerID != stored.OwnerID {
			t.Errorf("writer %d was told the pin is %s/%s, but %s/%s is in force", i, got[i].RepositoryID, got[i].OwnerID,
				stored.RepositoryID, stored.OwnerID)
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

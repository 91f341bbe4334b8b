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

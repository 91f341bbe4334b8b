package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pluginyard/registry/store"
)

// testAuditOrder: entries come back newest first with ids that grow in the order they
// were written, page by page (limit, and before the last id seen), with what was written;
// entries written at once all come back, each with its own id.
func testAuditOrder(t *testing.T, b Backend) {
	ctx := context.Background()
	var want []store.AuditEntry
	for i := range 7 {
		e := store.AuditEntry{Actor: "cli", Action: "step", Target: fmt.Sprint("t", i), Outcome: "ok",
			Detail: map[string]any{"i": float64(i), "note": "n" + fmt.Sprint(i)}}
		if err := b.Audit(ctx, e); err != nil {
			t.Fatal(err)
		}
		want = append(want, e)
	}
	var got []store.AuditEntry
	before := int64(0)
	for page := 0; ; page++ {
		entries, err := b.AuditLog(ctx, 3, before)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) == 0 {
			break
		}
		if len(entries) > 3 || page > 3 {
			t.Fatalf("page %d of limit 3 has %d entries", page, len(entries))
		}
		got = append(got, entries...)
		before = entries[len(entries)-1].ID
	}
	slices.Reverse(got)
	for i := 1; i < len(got); i++ {
		if got[i].ID <= got[i-1].ID {
			t.Errorf("entry %d (%s) has id %d after id %d: ids must grow in write order", i, got[i].Target, got[i].ID, got[i-1].ID)
		}
	}
	for _, e := range got {
		if time.Since(e.At) > time.Hour || time.Until(e.At) > time.Minute {
			t.Errorf("entry %d is stamped %v, want about now", e.ID, e.At)
		}
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(store.AuditEntry{}, "ID", "At")); diff != "" {
		t.Errorf("audit log read back in write order (-written +read):\n%s", diff)
	}
	concurrentAudit(t, b, len(want))
}

// concurrentAudit: entries written by racing writers are all kept, with distinct ids.
func concurrentAudit(t *testing.T, b Backend, already int) {
	errs := race(racers, func(i int) error {
		return b.Audit(context.Background(), store.AuditEntry{Actor: "racer", Action: "race", Target: fmt.Sprint(i), Outcome: "ok"})
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("racer %d: %v", i, err)
		}
	}
	log := auditLog(t, b)
	ids := map[int64]bool{}
	for _, e := range log {
		ids[e.ID] = true
	}
	if len(log) != already+racers || len(ids) != len(log) {
		t.Errorf("after %d racing writes: %d entries with %d distinct ids, want %d", racers, len(log), len(ids), already+racers)
	}
}

// testAuditOutcome: an entry without an outcome is recorded as ok, without detail as an
// empty one; an outcome other than ok, refused or error is refused and records nothing.
func testAuditOutcome(t *testing.T, b Backend) {
	ctx := context.Background()
	if err := b.Audit(ctx, store.AuditEntry{Actor: "cli", Action: "plain"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Audit(ctx, store.AuditEntry{Actor: "cli", Action: "publish", Target: "acme@1.0.0", Outcome: "refused",
		Detail: map[string]any{"rules": []any{"publish.version.exists"}}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Audit(ctx, store.AuditEntry{Actor: "cli", Action: "odd", Outcome: "bogus"}); err == nil {
		t.Error(`an audit entry with outcome "bogus" was accepted`)
	}
	want := []store.AuditEntry{
		{Actor: "cli", Action: "publish", Target: "acme@1.0.0", Outcome: "refused", Detail: map[string]any{"rules": []any{"publish.version.exists"}}},
		{Actor: "cli", Action: "plain", Outcome: "ok", Detail: map[string]any{}},
	}
	if diff := cmp.Diff(want, auditLog(t, b), cmpopts.IgnoreFields(store.AuditEntry{}, "ID", "At")); diff != "" {
		t.Errorf("audit log (-want +got):\n%s", diff)
	}
}

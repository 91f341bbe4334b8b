package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// yankState is "version yanked reason" for each release of acme, newest first.
func yankState(tb testing.TB, b Backend) []string {
	tb.Helper()
	rels, err := b.Releases(context.Background(), "acme")
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, r := range rels {
		y := "live"
		if r.Yanked {
			y = "yanked"
		}
		out = append(out, r.Version+" "+y+" "+r.YankReason)
	}
	return out
}

// testYank: a yank marks one release with its reason and an audit entry, an un-yank
// clears both, and neither touches another release; yanking a release that does not
// exist is ErrNotFound.
func testYank(t *testing.T, b Backend) {
	ctx := context.Background()
	mustPublish(t, b, "acme", "1.0.0", []byte("one"))
	mustPublish(t, b, "acme", "1.1.0", []byte("two"))
	yank := store.AuditEntry{Actor: "admin", Action: "yank", Target: "acme@1.1.0", Outcome: "ok"}
	if err := b.SetYanked(ctx, "acme", "1.1.0", true, "broken build", yank); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"1.1.0 yanked broken build", "1.0.0 live "}, yankState(t, b)); diff != "" {
		t.Errorf("after the yank (-want +got):\n%s", diff)
	}
	if rel, err := b.Release(ctx, "acme", "1.1.0"); err != nil || !rel.Yanked || rel.YankReason != "broken build" {
		t.Errorf("Release(acme@1.1.0) after the yank = %+v, %v", rel, err)
	}
	if log := auditLog(t, b); len(log) == 0 || log[0].Action != "yank" || log[0].Target != "acme@1.1.0" {
		t.Errorf("newest audit entry after the yank = %+v, want the yank of acme@1.1.0", log)
	}
	if err := b.SetYanked(ctx, "acme", "1.1.0", false, "", okAudit); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"1.1.0 live ", "1.0.0 live "}, yankState(t, b)); diff != "" {
		t.Errorf("after the un-yank (-want +got):\n%s", diff)
	}
	before := snapshot(t, b)
	for _, q := range [][2]string{{"acme", "9.9.9"}, {"missing", "1.0.0"}} {
		if err := b.SetYanked(ctx, q[0], q[1], true, "x", okAudit); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("SetYanked(%s@%s) = %v, want ErrNotFound", q[0], q[1], err)
		}
	}
	if diff := cmp.Diff(before, snapshot(t, b)); diff != "" {
		t.Errorf("a yank of a missing release changed the store (-before +after):\n%s", diff)
	}
}

// testYankAll: delisting yanks every live version, oldest first, with one audit entry
// each, in one transaction: when one of its writes fails, none is yanked; a release
// yanked before keeps its reason; a second delisting yanks nothing.
func testYankAll(t *testing.T, b Backend) {
	ctx := context.Background()
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
		mustPublish(t, b, "acme", v, []byte("bytes "+v))
	}
	if err := b.SetYanked(ctx, "acme", "1.1.0", true, "broken", okAudit); err != nil {
		t.Fatal(err)
	}
	audit := func(refuse string) func(string) store.AuditEntry {
		return func(v string) store.AuditEntry {
			e := store.AuditEntry{Actor: "cli", Action: "yank", Target: "acme@" + v, Outcome: "ok"}
			if v == refuse {
				e.Outcome = "bogus" // an outcome the audit log refuses fails that write
			}
			return e
		}
	}
	before := snapshot(t, b)
	if _, err := b.YankAll(ctx, "acme", "gone", audit("1.2.0")); err == nil {
		t.Fatal("YankAll whose last audit entry is refused succeeded")
	}
	if diff := cmp.Diff(before, snapshot(t, b)); diff != "" {
		t.Errorf("a failed YankAll changed the store (-before +after):\n%s", diff)
	}
	done, err := b.YankAll(ctx, "acme", "gone", audit(""))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"1.0.0", "1.2.0"}, done); diff != "" {
		t.Errorf("YankAll yanked (-want +got):\n%s", diff)
	}
	want := []string{"1.2.0 yanked gone", "1.1.0 yanked broken", "1.0.0 yanked gone"}
	if diff := cmp.Diff(want, yankState(t, b)); diff != "" {
		t.Errorf("after YankAll (-want +got):\n%s", diff)
	}
	if got := len(auditLog(t, b)) - before.Audit; got != 2 {
		t.Errorf("YankAll of two versions wrote %d audit entries, want 2", got)
	}
	again, err := b.YankAll(ctx, "acme", "gone", audit(""))
	if err != nil || len(again) != 0 {
		t.Errorf("a second YankAll = %v, %v; want nothing yanked", again, err)
	}
	if got, _ := b.YankAll(ctx, "missing", "gone", audit("")); len(got) != 0 {
		t.Errorf("YankAll of a package without releases yanked %v", got)
	}
}

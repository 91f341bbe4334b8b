package store_test

import (
	"context"
	"testing"

	"github.com/pluginyard/registry/store"
)

// TestYankAllIsAllOrNothing: delisting yanks every live version in one transaction; when
// one of its writes fails, no version is yanked.
func TestYankAllIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	for _, v := range []string{"1.0.0", "1.1.0"} {
		if _, err := s.InsertRelease(ctx, mustRelease(t, s, "acme", v, []byte("bytes "+v)), store.AuditEntry{Actor: "t", Action: "publish", Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	audit := func(outcome string) func(string) store.AuditEntry {
		return func(v string) store.AuditEntry {
			o := "ok"
			if v == "1.1.0" {
				o = outcome // an outcome the audit table's CHECK refuses fails the second write
			}
			return store.AuditEntry{Actor: "cli", Action: "yank", Target: "acme@" + v, Outcome: o}
		}
	}
	if _, err := s.YankAll(ctx, "acme", "gone", audit("bogus")); err == nil {
		t.Fatal("YankAll with a failing write succeeded")
	}
	rels, err := s.Releases(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rels {
		if r.Yanked {
			t.Errorf("%s was yanked by a YankAll that failed", r.Version)
		}
	}
	done, err := s.YankAll(ctx, "acme", "gone", audit("ok"))
	if err != nil || len(done) != 2 {
		t.Fatalf("YankAll = %v, %v; want both versions", done, err)
	}
}

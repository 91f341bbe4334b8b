package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pluginyard/registry/store"
)

// TestCompatCurationIsAuditedAndMovesTheSerial: setting and clearing a curation each
// record an audit entry, bump the serial and record a "compat" change in the feed, in the
// same transaction; clearing what is not curated changes nothing but is audited.
func TestCompatCurationIsAuditedAndMovesTheSerial(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	if _, err := s.InsertRelease(ctx, mustRelease(t, s, "acme", "1.0.0", []byte("bytes")), store.AuditEntry{Actor: "t", Action: "publish", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	before := mustSerial(t, s)
	c := store.Curation{PackageID: "acme", Version: "1.0.0", MaxKandev: "0.93.4", Reason: "crashes on 0.94", SetBy: "admin"}
	if err := s.SetCompat(ctx, c, store.AuditEntry{Actor: "admin", Action: "compat_set", Target: "acme@1.0.0", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Curations(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]store.Curation{"1.0.0": c}, got, cmpopts.IgnoreFields(store.Curation{}, "SetAt")); diff != "" {
		t.Errorf("curations (-want +got):\n%s", diff)
	}
	if s1 := mustSerial(t, s); s1 != before+1 {
		t.Errorf("serial %d after SetCompat, want %d", s1, before+1)
	}
	page, err := s.Changes(ctx, before, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Changes) != 1 || page.Changes[0].Kind != store.ChangeCompat || page.Changes[0].PackageID != "acme" || page.Changes[0].Version != "1.0.0" {
		t.Errorf("feed after SetCompat: %+v, want one compat change of acme@1.0.0", page.Changes)
	}
	had, err := s.ClearCompat(ctx, "acme", "1.0.0", store.AuditEntry{Actor: "admin", Action: "compat_clear", Target: "acme@1.0.0", Outcome: "ok"})
	if err != nil || !had {
		t.Fatalf("ClearCompat = %v, %v; want true", had, err)
	}
	had, err = s.ClearCompat(ctx, "acme", "1.0.0", store.AuditEntry{Actor: "admin", Action: "compat_clear", Target: "acme@1.0.0", Outcome: "ok"})
	if err != nil || had {
		t.Fatalf("second ClearCompat = %v, %v; want false", had, err)
	}
	if s2 := mustSerial(t, s); s2 != before+2 {
		t.Errorf("serial %d after set, clear and a no-op clear; want %d", s2, before+2)
	}
	log, err := s.AuditLog(ctx, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range log[:2] {
		actions = append(actions, e.Action+" "+e.Outcome)
	}
	if log[2].Action == "compat_clear" {
		t.Errorf("the no-op clear was audited: %+v", log[:3])
	}
	if diff := cmp.Diff([]string{"compat_clear ok", "compat_set ok"}, actions); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
	if err := s.SetCompat(ctx, store.Curation{PackageID: "acme", Version: "9.9.9", MaxKandev: "0.93.4", Reason: "x", SetBy: "a"}, store.AuditEntry{Actor: "a", Action: "compat_set"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetCompat of an unknown release: %v, want ErrNotFound", err)
	}
}

func mustSerial(tb testing.TB, s *store.Store) int64 {
	tb.Helper()
	v, err := s.Serial(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

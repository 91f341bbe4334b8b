package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/translog"
)

// TestQuarantineRecordsFeedLogAndAudit: a quarantine and its release each bump the serial
// with a feed change, append a transparency-log record and write an audit entry, in one
// transaction; releasing what is not quarantined records nothing; nothing of the package
// is deleted.
func TestQuarantineRecordsFeedLogAndAudit(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	rel := mustRelease(t, s, "acme", "1.0.0", []byte("bytes"))
	if _, err := s.InsertRelease(ctx, rel, store.AuditEntry{Actor: "t", Action: "publish", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	before, size := mustSerial(t, s), mustLogSize(t, s)
	whole := store.Quarantine{PackageID: "acme", Reason: "a leaked token published malware", SetBy: "admin"}
	one := store.Quarantine{PackageID: "acme", Version: "1.0.0", Reason: "steals credentials", SetBy: "admin"}
	for _, q := range []store.Quarantine{whole, one} {
		if err := s.SetQuarantine(ctx, q, store.AuditEntry{Actor: "admin", Action: "quarantine", Target: q.Target()}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Quarantines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.Quarantine{whole, one}, got, cmpopts.IgnoreFields(store.Quarantine{}, "SetAt")); diff != "" {
		t.Errorf("quarantines (-want +got):\n%s", diff)
	}
	for _, v := range []string{"", "1.0.0"} {
		had, err := s.ReleaseQuarantine(ctx, "acme", v, store.AuditEntry{Actor: "admin", Action: "unquarantine", Target: "acme"})
		if err != nil || !had {
			t.Fatalf("ReleaseQuarantine(%q) = %v, %v; want true", v, had, err)
		}
	}
	if had, err := s.ReleaseQuarantine(ctx, "acme", "", store.AuditEntry{Actor: "admin", Action: "unquarantine", Target: "acme"}); err != nil || had {
		t.Fatalf("second ReleaseQuarantine = %v, %v; want false", had, err)
	}
	if got := mustSerial(t, s); got != before+4 {
		t.Errorf("serial %d after two quarantines, two releases and a no-op; want %d", got, before+4)
	}
	page, err := s.Changes(ctx, before, 10)
	if err != nil {
		t.Fatal(err)
	}
	var changes []string
	for _, c := range page.Changes {
		changes = append(changes, c.Kind+" "+c.PackageID+"@"+c.Version)
	}
	wantChanges := []string{"quarantine acme@", "quarantine acme@1.0.0", "unquarantine acme@", "unquarantine acme@1.0.0"}
	if diff := cmp.Diff(wantChanges, changes); diff != "" {
		t.Errorf("feed (-want +got):\n%s", diff)
	}
	texts, err := s.RecordTexts(ctx, size, mustLogSize(t, s))
	if err != nil {
		t.Fatal(err)
	}
	var recs []string
	for _, text := range texts {
		r, err := translog.ParseRecord(text)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, string(r.Kind)+" "+r.ID+"@"+r.Version+" "+r.SHA256)
	}
	wantRecs := []string{"quarantine acme@ ", "quarantine acme@1.0.0 " + rel.SHA256, "unquarantine acme@ ", "unquarantine acme@1.0.0 " + rel.SHA256}
	if diff := cmp.Diff(wantRecs, recs); diff != "" {
		t.Errorf("log records (-want +got):\n%s", diff)
	}
	log, err := s.AuditLog(ctx, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range log {
		actions = append(actions, e.Action)
	}
	if want := []string{"unquarantine", "unquarantine", "quarantine", "quarantine", "publish"}; !cmp.Equal(want, actions) {
		t.Errorf("audit actions %q, want %q", actions, want)
	}
	if rels, err := s.Releases(ctx, "acme"); err != nil || len(rels) != 1 {
		t.Errorf("releases after quarantine and release: %d, %v; want the one release kept", len(rels), err)
	}
}

// TestQuarantineNeedsAStoredTarget: a release that is not stored, or a package with no
// release, cannot be quarantined, and nothing is recorded.
func TestQuarantineNeedsAStoredTarget(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	if _, err := s.InsertRelease(ctx, mustRelease(t, s, "acme", "1.0.0", []byte("bytes")), store.AuditEntry{Actor: "t", Action: "publish", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	before := mustSerial(t, s)
	for _, q := range []store.Quarantine{{PackageID: "acme", Version: "9.9.9"}, {PackageID: "nobody"}} {
		q.Reason, q.SetBy = "x", "admin"
		if err := s.SetQuarantine(ctx, q, store.AuditEntry{Actor: "admin", Action: "quarantine"}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("SetQuarantine(%s) = %v, want ErrNotFound", q.Target(), err)
		}
	}
	if got := mustSerial(t, s); got != before {
		t.Errorf("serial moved to %d on refused quarantines, want %d", got, before)
	}
}

// TestQuarantineReasonBoundInSchema: the table refuses an empty reason and one over 500
// characters even when a caller skipped the service's check.
func TestQuarantineReasonBoundInSchema(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	if _, err := s.InsertRelease(ctx, mustRelease(t, s, "acme", "1.0.0", []byte("bytes")), store.AuditEntry{Actor: "t", Action: "publish", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	for _, reason := range []string{"", strings.Repeat("é", 501)} {
		err := s.SetQuarantine(ctx, store.Quarantine{PackageID: "acme", Reason: reason, SetBy: "admin"}, store.AuditEntry{Actor: "admin", Action: "quarantine"})
		if err == nil || !strings.Contains(strings.ToUpper(err.Error()), "CHECK") { // SQLite: CHECK constraint failed; PostgreSQL: violates check constraint
			t.Errorf("reason of %d characters: %v, want a CHECK failure", len([]rune(reason)), err)
		}
	}
	if err := s.SetQuarantine(ctx, store.Quarantine{PackageID: "acme", Reason: strings.Repeat("é", 500), SetBy: "admin"}, store.AuditEntry{Actor: "admin", Action: "quarantine"}); err != nil {
		t.Errorf("reason of 500 characters: %v", err)
	}
}

func mustLogSize(tb testing.TB, s *store.Store) int64 {
	tb.Helper()
	n, err := s.LogSize(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pluginyard/registry/store"
)

func TestSetArchived(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	if _, err := s.InsertRelease(ctx, mustRelease(t, s, "acme", "1.0.0", []byte("one")), store.AuditEntry{Actor: "a", Action: "publish", Target: "acme@1.0.0", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	audit := store.AuditEntry{Actor: "acme", Action: "archive", Target: "acme", Outcome: "ok"}
	steps := []struct {
		archived    bool
		wantChanged bool
		wantKind    string // the feed's last change; "" when none was added
	}{
		{true, true, store.ChangeArchive},
		{true, false, ""},
		{false, true, store.ChangeUnarchive},
		{false, false, ""},
		{true, true, store.ChangeArchive},
	}
	serial, _ := s.Serial(ctx)
	for i, st := range steps {
		changed, err := s.SetArchived(ctx, "acme", st.archived, audit)
		if err != nil || changed != st.wantChanged {
			t.Fatalf("step %d: SetArchived(%v) = %v, %v; want changed %v", i, st.archived, changed, err, st.wantChanged)
		}
		pkg, err := s.Package(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		if (pkg.ArchivedAt != nil) != st.archived {
			t.Errorf("step %d: ArchivedAt = %v, want archived %v", i, pkg.ArchivedAt, st.archived)
		}
		page, err := s.Changes(ctx, serial, 10)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case st.wantKind == "" && len(page.Changes) != 0:
			t.Errorf("step %d: a no-op recorded %+v", i, page.Changes)
		case st.wantKind != "" && (len(page.Changes) != 1 || page.Changes[0].Kind != st.wantKind || page.Changes[0].PackageID != "acme"):
			t.Errorf("step %d: changes = %+v, want one %s of acme", i, page.Changes, st.wantKind)
		}
		serial = page.Serial
	}
	log, err := s.AuditLog(ctx, 20, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range log {
		if e.Action == "archive" {
			n++
		}
	}
	if n != 3 {
		t.Errorf("audit has %d archive entries, want 3 (one per change, none for a no-op)", n)
	}
	if _, err := s.SetArchived(ctx, "nobody", true, audit); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("archiving an unknown package: %v, want ErrNotFound", err)
	}
	pkgs, err := s.Packages(ctx)
	if err != nil || pkgs["acme"].ArchivedAt == nil {
		t.Errorf("Packages does not carry the archive: %+v, %v", pkgs["acme"], err)
	}
}

// The rebuilt change feed (migration 0017) is still append-only.
func TestChangesStayAppendOnly(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	if _, err := s.InsertRelease(ctx, mustRelease(t, s, "acme", "1.0.0", []byte("one")), store.AuditEntry{Actor: "a", Action: "publish", Target: "acme@1.0.0", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	db := store.RawDB(s)
	for _, q := range []string{"UPDATE changes SET change = 'yank'", "DELETE FROM changes"} {
		if _, err := db.ExecContext(ctx, q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want the append-only trigger to abort it", q, err)
		}
	}
}

// Search results, with text or without, list archived packages after active ones, each
// part in the asked order.
func TestSearchOrdersArchivedLast(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	now := time.Now()
	for _, id := range []string{"stats-pro", "stats-lite", "stats-old"} {
		if _, err := s.InsertRelease(ctx, mustRelease(t, s, id, "1.0.0", []byte(id)), store.AuditEntry{Actor: "a", Action: "publish", Target: id, Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	docs := []store.SearchDoc{
		{ID: "stats-old", Name: "Stats Old", Description: "stats stats stats stats", Kind: "plugin", UpdatedAt: now.Add(time.Hour), Downloads: 1000},
		{ID: "stats-pro", Name: "Stats Pro", Description: "stats for teams", Kind: "plugin", UpdatedAt: now, Downloads: 50},
		{ID: "stats-lite", Name: "Stats Lite", Description: "a little stats", Kind: "plugin", UpdatedAt: now, Downloads: 10},
	}
	if err := s.ReplaceSearch(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetArchived(ctx, "stats-old", true, store.AuditEntry{Actor: "acme", Action: "archive", Target: "stats-old", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []store.SearchQuery{
		{Q: "stats", Limit: 10}, {Q: "stats", Sort: "downloads", Limit: 10}, {Q: "stats", Sort: "recent", Limit: 10},
		{Sort: "downloads", Limit: 10}, {Sort: "name", Limit: 10}, {Kind: "plugin", Sort: "recent", Limit: 10},
	} {
		got, _, err := s.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[2] != "stats-old" {
			t.Errorf("Search(%+v) = %v, want the archived stats-old last", q, got)
		}
	}
}

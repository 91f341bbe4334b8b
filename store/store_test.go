package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
)

// MustOpen opens a fresh store: SQLite on a temporary data directory, or with
// REGISTRY_TEST_DATABASE=postgres a fresh PostgreSQL database (storetest.OpenStore).
func MustOpen(tb testing.TB) *store.Store {
	tb.Helper()
	return storetest.OpenStore(tb)
}

// sqliteOnly skips a test of SQLite's own behaviour when the tests run on PostgreSQL.
func sqliteOnly(tb testing.TB, why string) {
	tb.Helper()
	if storetest.OnPostgres() {
		tb.Skip("SQLite only: " + why)
	}
}

func mustRelease(tb testing.TB, s *store.Store, id, version string, data []byte) *store.Release {
	tb.Helper()
	sha, err := s.Blobs.Put(data)
	if err != nil {
		tb.Fatal(err)
	}
	return &store.Release{PackageID: id, Version: version, Kind: "plugin", SHA256: sha, Size: int64(len(data)),
		Manifest: []byte("id: " + id), PublishedBy: "test"}
}

func TestMigrationsTwice(t *testing.T) {
	sqliteOnly(t, "reopens a SQLite data directory; TestOpenURLMigratesOnce covers PostgreSQL")
	dir := t.TempDir()
	for i := 0; i < 2; i++ {
		s, err := store.Open(context.Background(), dir)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDataDirectoryNamesAreLiteral: a data directory whose name holds a character that
// means something in a SQLite URI ('#', '?', '%') keeps its database inside it, and two
// such directories never share one.
func TestDataDirectoryNamesAreLiteral(t *testing.T) {
	sqliteOnly(t, "the database file of a SQLite data directory")
	ctx := context.Background()
	base := t.TempDir()
	names := []string{"reg#1", "reg#2", "reg?mode=ro", "reg%41", "regA"}
	for _, name := range names {
		s, err := store.Open(ctx, filepath.Join(base, name))
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		if _, err := s.InsertRelease(ctx, mustRelease(t, s, "acme", "1.0.0", []byte(name)), store.AuditEntry{Actor: "a", Action: "publish"}); err != nil {
			t.Errorf("publish into %s: %v", name, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(base)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if want := slices.Sorted(slices.Values(names)); !slices.Equal(got, want) {
		t.Errorf("%s holds %q, want the data directories %q alone", base, got, want)
	}
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(base, name, store.DBFile)); err != nil {
			t.Errorf("data directory %s: %v", name, err)
		}
	}
}

// TestOpenSaysWhatIsWrongWithTheFile: a database file SQLite cannot use gets the cause and
// the fix beside SQLite's own words.
func TestOpenSaysWhatIsWrongWithTheFile(t *testing.T) {
	sqliteOnly(t, "the SQLite database file")
	for name, tt := range map[string]struct {
		plant func(path string) error
		want  string
	}{
		"garbage": {func(path string) error {
			return os.WriteFile(path, []byte(strings.Repeat("not a database\n", 500)), 0o600)
		},
			"is damaged or not a registry database; restore it from a backup with the registry stopped (registry restore --force SNAPSHOT)"},
		"a folder": {func(path string) error { return os.Mkdir(path, 0o750) }, "is a folder, not a database file"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tt.plant(filepath.Join(dir, store.DBFile)); err != nil {
				t.Fatal(err)
			}
			s, err := store.Open(context.Background(), dir)
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
}

func TestInsertReleaseConflictAndSerial(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	rel := mustRelease(t, s, "acme", "1.0.0", []byte("one"))
	if _, err := s.InsertRelease(ctx, rel, store.AuditEntry{Actor: "a", Action: "publish", Target: "acme@1.0.0"}); err != nil {
		t.Fatal(err)
	}
	again := mustRelease(t, s, "acme", "1.0.0", []byte("two"))
	old, err := s.InsertRelease(ctx, again, store.AuditEntry{Actor: "a", Action: "publish"})
	if !errors.Is(err, store.ErrConflict) || old.SHA256 != rel.SHA256 {
		t.Fatalf("second insert: err=%v old=%+v", err, old)
	}
	serial, err := s.Serial(ctx)
	if err != nil || serial != 1 {
		t.Fatalf("serial = %d, %v; want 1", serial, err)
	}
	got, err := s.Release(ctx, "acme", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FillManifests(ctx, []*store.Release{got}); err != nil {
		t.Fatal(err)
	}
	if got.SHA256 != rel.SHA256 || string(got.Manifest) != "id: acme" {
		t.Errorf("release = %+v", got)
	}
	if _, err := s.Release(ctx, "acme", "9.9.9"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing release err = %v", err)
	}
	log, err := s.AuditLog(ctx, 10, 0)
	if err != nil || len(log) != 1 || log[0].Target != "acme@1.0.0" {
		t.Errorf("audit = %+v, %v", log, err)
	}
}

func TestBlobsAreContentAddressed(t *testing.T) {
	s := MustOpen(t)
	data := []byte("hello blob")
	sha, err := s.Blobs.Put(data)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if sha != hex.EncodeToString(sum[:]) {
		t.Fatalf("sha = %s", sha)
	}
	got, err := s.Blobs.ReadAll(sha)
	if err != nil || string(got) != string(data) {
		t.Fatalf("read = %q, %v", got, err)
	}
	if _, err := s.Blobs.Open("../../etc/passwd"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("traversal open err = %v", err)
	}
}

func TestCollectGarbageRemovesOrphans(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	rel := mustRelease(t, s, "kept", "1.0.0", []byte("kept"))
	if _, err := s.InsertRelease(ctx, rel, store.AuditEntry{Actor: "a", Action: "publish"}); err != nil {
		t.Fatal(err)
	}
	orphan, err := s.Blobs.Put([]byte("orphan"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.CollectGarbage(ctx)
	if err != nil || n != 1 {
		t.Fatalf("gc = %d, %v", n, err)
	}
	if _, err := s.Blobs.Open(orphan); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("orphan still there: %v", err)
	}
	if _, err := s.Blobs.Open(rel.SHA256); err != nil {
		t.Errorf("kept blob gone: %v", err)
	}
}

func TestSearch(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	now := time.Now()
	docs := []store.SearchDoc{
		{ID: "slack", Name: "Slack", Description: "Post to Slack channels", Categories: []string{"connector"}, Kind: "plugin", UpdatedAt: now, Downloads: 5},
		{ID: "slack-extras", Name: "Slack Extras", Description: "More slack things", Categories: []string{"tools"}, Kind: "plugin", UpdatedAt: now.Add(time.Hour), Downloads: 50},
		{ID: "board", Name: "Task Board", Description: "A canvas board; mentions slack once", Categories: []string{"canvas"}, Kind: "canvas", UpdatedAt: now},
	}
	if err := s.ReplaceSearch(ctx, docs); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		q     store.SearchQuery
		want  []string
		total int
	}{
		{store.SearchQuery{Q: "slack", Limit: 10}, []string{"slack", "slack-extras", "board"}, 3},
		{store.SearchQuery{Q: "sla", Kind: "plugin", Limit: 10}, []string{"slack", "slack-extras"}, 2},
		{store.SearchQuery{Category: "tools", Limit: 10}, []string{"slack-extras"}, 1},
		{store.SearchQuery{Sort: "downloads", Limit: 1}, []string{"slack-extras"}, 3},
		{store.SearchQuery{Sort: "name", Limit: 10, Offset: 1}, []string{"slack-extras", "board"}, 3},
		{store.SearchQuery{Q: `"); DROP TABLE search; --`, Limit: 10}, nil, 0},
	}
	for _, tt := range tests {
		got, total, err := s.Search(ctx, tt.q)
		if err != nil {
			t.Fatalf("%+v: %v", tt.q, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" || total != tt.total {
			t.Errorf("%+v: ids (-want +got):\n%s total=%d", tt.q, diff, total)
		}
	}
}

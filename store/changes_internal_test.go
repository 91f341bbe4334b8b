package store

import (
	"context"
	"io/fs"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/pluginyard/registry/migrations"
)

// TestChangesOnAnOldDatabase: a database that had changes before the feed began cannot
// know them; the feed says it is complete from the serial of that moment on.
func TestChangesOnAnOldDatabase(t *testing.T) {
	sqliteOnly(t, "SQLite migrations 0001-0009 on a database file")
	ctx := context.Background()
	dir := t.TempDir()
	w, err := openDB(filepath.Join(dir, DBFile), false)
	if err != nil {
		t.Fatal(err)
	}
	old := &Store{w: w, dir: dir, now: func() time.Time { return time.Now().UTC() }}
	if _, err := w.ExecContext(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`); err != nil {
		t.Fatal(err)
	}
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	for _, name := range names {
		if name >= "0010" {
			break
		}
		if err := old.applyMigration(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.ExecContext(ctx, "UPDATE meta SET value = '7' WHERE key = 'serial'"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.BumpSerial(ctx); err != nil {
		t.Fatal(err)
	}
	page, err := s.Changes(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if page.CompleteSince != 7 || page.Serial != 8 || len(page.Changes) != 1 || page.Changes[0].Serial != 8 || page.Changes[0].Kind != ChangeList {
		t.Errorf("feed of a database at serial 7 before it: complete since %d, serial %d, changes %+v; want 7, 8 and one list change at 8",
			page.CompleteSince, page.Serial, page.Changes)
	}
}

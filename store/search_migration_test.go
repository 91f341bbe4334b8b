package store_test

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/migrations"
	"github.com/pluginyard/registry/store"
)

// TestMigrationKeysAndPrefixesExistingSearchRows opens a database made by the migrations
// before 0012, holding search rows in their kind bands, and checks that migration 0012
// kept every row and rowid (kind filters still hold), keyed its ids and names (an exact id
// or name match still comes first) and gave the table its prefix indexes.
func TestMigrationKeysAndPrefixesExistingSearchRows(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, store.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`)
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range names {
		if name >= "0012" {
			break
		}
		body, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, db, string(body))
		mustExec(t, db, `INSERT INTO schema_migrations VALUES (?, ?, '2026-01-01T00:00:00Z')`, i+1, name)
	}
	const plugin, canvas = int64(1) << 40, int64(2) << 40
	for _, r := range []struct {
		rowid                       int64
		id, name, description, kind string
	}{
		{plugin + 1, "board-pro", "Board Pro", "board board board", "plugin"},
		{plugin + 2, "board", "Kanban", "a long description that says little", "plugin"},
		{canvas + 1, "gen-notes", "Generated Notes", "notes on a canvas", "canvas"},
	} {
		mustExec(t, db, `INSERT INTO search (rowid, id, name, description, author, categories, kind, updated_at, downloads)
			VALUES (?, ?, ?, ?, 'a', 'tools', ?, '2026-01-01T00:00:00Z', 0)`, r.rowid, r.id, r.name, r.description, r.kind)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		q    store.SearchQuery
		want []string
	}{
		{store.SearchQuery{Q: "board"}, []string{"board", "board-pro"}},
		{store.SearchQuery{Q: "KANBAN"}, []string{"board"}},
		{store.SearchQuery{Q: "ge", Kind: "canvas"}, []string{"gen-notes"}},
		{store.SearchQuery{Q: "no", Kind: "plugin"}, nil},
	} {
		tt.q.Limit = 10
		got, _, err := s.Search(ctx, tt.q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Search(%+v) after migration (-want +got):\n%s", tt.q, diff)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = sql.Open("sqlite", "file:"+filepath.Join(dir, store.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var schema string
	if err := db.QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'search'`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(schema, "prefix") {
		t.Errorf("search table after migration: %s, want prefix indexes", schema)
	}
	var keys []string
	rows, err := db.Query(`SELECT key FROM search_keys WHERE search_rowid = ?`, plugin+2)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if diff := cmp.Diff([]string{"board", "kanban"}, keys); diff != "" {
		t.Errorf("keys of the row board (-want +got):\n%s", diff)
	}
}

// TestSearchIndexesInitials: the SQLite search table has prefix indexes from one letter
// (migration 0020), so that a text of one-letter words reads one index entry per word
// instead of merging every word of that initial (BenchmarkSearchHostile's initials).
func TestSearchIndexesInitials(t *testing.T) {
	s, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ddl string
	if err := store.RawDB(s).QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'search'`).Scan(&ddl); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ddl, "prefix = '1 2 3 4 5 6 7 8'") {
		t.Errorf("the search table is %s; want prefix indexes from one letter to eight", ddl)
	}
}

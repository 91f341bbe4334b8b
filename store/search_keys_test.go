package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// TestSearchExactFollowsUpserts: the exact-match keys follow a package's id and name
// through upserts and deletes: a package renamed away from the text no longer comes first
// as an exact match, and the one renamed to it does; no key outlives its row, its name
// or a full rebuild, and a stray key makes no exact match.
func TestSearchExactFollowsUpserts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	a := store.SearchDoc{ID: "a-tool", Name: "Kanban", Description: "kanban kanban kanban", Kind: "plugin", UpdatedAt: now, Downloads: 10}
	b := store.SearchDoc{ID: "b-tool", Name: "Other", Description: "a kanban", Kind: "plugin", UpdatedAt: now, Downloads: 1}
	c := store.SearchDoc{ID: "c-tool", Name: "Gone", Description: "kanban kanban kanban kanban", Kind: "plugin", UpdatedAt: now}
	d := store.SearchDoc{ID: "d-canvas", Name: "Canvas", Description: "kanban", Kind: "canvas", UpdatedAt: now}
	old := store.SearchDoc{ID: "old-tool", Name: "Old", Kind: "extension", UpdatedAt: now}
	if err = s.ReplaceSearch(ctx, []store.SearchDoc{old}); err != nil {
		t.Fatal(err)
	}
	if err = s.ReplaceSearch(ctx, []store.SearchDoc{a, b, c, d}); err != nil {
		t.Fatal(err)
	}
	a.Name, b.Name = "Board", "Kanban"
	if err := s.UpsertSearch(ctx, []store.SearchDoc{a, b}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSearch(ctx, []string{c.ID}); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.Search(ctx, store.SearchQuery{Q: "kanban", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b-tool", "a-tool", "d-canvas"}, got); diff != "" {
		t.Errorf("Search(kanban) after renames (-want +got):\n%s", diff)
	}
	got, _, err = s.Search(ctx, store.SearchQuery{Q: "kanban", Kind: "canvas", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"d-canvas"}, got); diff != "" {
		t.Errorf("Search(kanban, kind canvas) (-want +got), the exact match b-tool is a plugin:\n%s", diff)
	}
	got, _, err = s.Search(ctx, store.SearchQuery{Q: "gone", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("Search(gone) after deleting c-tool = %v, want none", got)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, store.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var keys string
	if err := db.QueryRow(`SELECT group_concat(key, ' ') FROM (SELECT key FROM search_keys ORDER BY key)`).Scan(&keys); err != nil {
		t.Fatal(err)
	}
	if want := "a-tool b-tool board canvas d-canvas kanban"; keys != want {
		t.Errorf("search keys %q, want %q", keys, want)
	}
	// A key that is not its row's (a stray one) does not make that row an exact match.
	if _, err := db.Exec(`INSERT INTO search_keys (key, search_rowid) SELECT 'kanban', rowid FROM search WHERE id = 'a-tool'`); err != nil {
		t.Fatal(err)
	}
	got, _, err = s.Search(ctx, store.SearchQuery{Q: "kanban", Sort: "name", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b-tool", "a-tool", "d-canvas"}, got); diff != "" {
		t.Errorf("Search(kanban, sort name) with a stray key (-want +got):\n%s", diff)
	}
}

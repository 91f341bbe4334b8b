package store_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// TestSearchRowOfIDIsExact: an upsert or delete of an id finds that id's row only, not
// a row whose name has the id's key (a package named after another's id) nor one whose
// id differs only in case, whichever comes first in rowid order; an upserted row keeps
// its rowid (its place in the download order).
func TestSearchRowOfIDIsExact(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		ctx := context.Background()
		s, db := be.openRaw(t)
		now := time.Now()
		docs := []store.SearchDoc{
			{ID: "tool", Name: "Board", Description: "kanban", Kind: "plugin", UpdatedAt: now, Downloads: 30},
			{ID: "Board", Name: "Upper", Description: "kanban", Kind: "plugin", UpdatedAt: now, Downloads: 20},
			{ID: "board", Name: "Other", Description: "kanban", Kind: "plugin", UpdatedAt: now, Downloads: 10},
			{ID: "after", Name: "board", Description: "kanban", Kind: "plugin", UpdatedAt: now, Downloads: 1},
		}
		if err := s.ReplaceSearch(ctx, docs); err != nil {
			t.Fatal(err)
		}
		before := searchRowidsByID(t, db)
		if err := s.UpsertSearch(ctx, []store.SearchDoc{
			{ID: "board", Name: "Other", Description: "scrum", Kind: "plugin", UpdatedAt: now, Downloads: 10},
		}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(before, searchRowidsByID(t, db)); diff != "" {
			t.Errorf("rowids after upserting board (-before +after):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"after", "tool", "Board"}, searchIDs(t, s, "kanban")); diff != "" {
			t.Errorf("Search(kanban) by name (board, Board, Upper) after upserting board (-want +got):\n%s", diff)
		}
		if err := s.DeleteSearch(ctx, []string{"board"}); err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{"tool": before["tool"], "Board": before["Board"], "after": before["after"]}
		if diff := cmp.Diff(want, searchRowidsByID(t, db)); diff != "" {
			t.Errorf("rows after deleting board (-want +got):\n%s", diff)
		}
		if ids := searchIDs(t, s, "scrum"); len(ids) != 0 {
			t.Errorf("Search(scrum) after deleting board = %v, want none", ids)
		}
	})
}

// TestSearchIDRowsAllReplaced: the store keeps one row per id, and a table an older
// version left two rows of an id in (with their keys) is left with one by an upsert of
// that id and with none by its delete: no row of the id's old words outlives them, and
// no key outlives its row.
func TestSearchIDRowsAllReplaced(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		ctx := context.Background()
		s, db := be.openRaw(t)
		now := time.Now()
		if err := s.ReplaceSearch(ctx, []store.SearchDoc{
			{ID: "dup", Name: "Dup", Description: "older words", Kind: "plugin", UpdatedAt: now, Downloads: 5},
			{ID: "other", Name: "Other", Description: "older words", Kind: "plugin", UpdatedAt: now, Downloads: 1},
		}); err != nil {
			t.Fatal(err)
		}
		duplicateSearchRow(t, be.name, db, "dup")
		if got := searchIDs(t, s, "older"); len(got) != 3 {
			t.Fatalf("Search(older) with a duplicated row = %v, want dup twice and other", got)
		}
		if err := s.UpsertSearch(ctx, []store.SearchDoc{
			{ID: "dup", Name: "Dup", Description: "newer words", Kind: "plugin", UpdatedAt: now, Downloads: 5},
		}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"other"}, searchIDs(t, s, "older")); diff != "" {
			t.Errorf("Search(older) after upserting dup (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"dup"}, searchIDs(t, s, "newer")); diff != "" {
			t.Errorf("Search(newer) after upserting dup (-want +got):\n%s", diff)
		}
		if keys := searchKeys(t, db); keys != "dup other" {
			t.Errorf("search keys after upserting dup %q, want %q", keys, "dup other")
		}
		duplicateSearchRow(t, be.name, db, "dup")
		if err := s.DeleteSearch(ctx, []string{"dup"}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]int64{"other": searchRowidsByID(t, db)["other"]}, searchRowidsByID(t, db)); diff != "" {
			t.Errorf("rows after deleting dup (-want +got):\n%s", diff)
		}
		if keys := searchKeys(t, db); keys != "other" {
			t.Errorf("search keys after deleting dup %q, want %q", keys, "other")
		}
	})
}

// duplicateSearchRow copies the row of id, and its keys, to a second rowid of its band,
// as a table an older version wrote may hold.
func duplicateSearchRow(tb testing.TB, backend string, db *sql.DB, id string) {
	tb.Helper()
	cols := "id, name, description, author, categories, kind, updated_at, downloads"
	if backend == "postgres" {
		cols += ", doc"
	}
	for _, q := range []string{
		"INSERT INTO search_keys (key, search_rowid) SELECT key, search_rowid + 1000 FROM search_keys WHERE search_rowid IN (SELECT rowid FROM search WHERE id = '" + id + "')",
		"INSERT INTO search (rowid, " + cols + ") SELECT rowid + 1000, " + cols + " FROM search WHERE id = '" + id + "'",
	} {
		if _, err := db.Exec(q); err != nil {
			tb.Fatal(err)
		}
	}
}

// searchRowidsByID is the rowid of every search row by id (one row per id).
func searchRowidsByID(tb testing.TB, db *sql.DB) map[string]int64 {
	tb.Helper()
	rows, err := db.Query("SELECT id, rowid FROM search")
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var rowid int64
		if err := rows.Scan(&id, &rowid); err != nil {
			tb.Fatal(err)
		}
		if _, dup := out[id]; dup {
			tb.Errorf("search holds two rows of %s", id)
		}
		out[id] = rowid
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

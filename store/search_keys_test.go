package store_test

import (
	"context"
	"database/sql"
	"strings"
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
	eachBackend(t, func(t *testing.T, be backend) {
		ctx := context.Background()
		s, db := be.openRaw(t)
		var err error
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
		if keys := searchKeys(t, db); keys != "a-tool b-tool board canvas d-canvas kanban" {
			t.Errorf("search keys %q, want %q", keys, "a-tool b-tool board canvas d-canvas kanban")
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
	})
}

// searchKeys is every key of search_keys, sorted, one space apart.
func searchKeys(tb testing.TB, db *sql.DB) string {
	tb.Helper()
	rows, err := db.Query(`SELECT key FROM search_keys ORDER BY key`)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			tb.Fatal(err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return strings.Join(keys, " ")
}

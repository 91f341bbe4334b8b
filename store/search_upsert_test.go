package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// searchIDs is every id matching q (free text, sorted by name), with the total Search reports.
func searchIDs(tb testing.TB, s *store.Store, q string) []string {
	tb.Helper()
	ids, total, err := s.Search(context.Background(), store.SearchQuery{Q: q, Sort: "name", Limit: 100})
	if err != nil {
		tb.Fatal(err)
	}
	if total != len(ids) {
		tb.Fatalf("Search(%q): total %d, ids %v", q, total, ids)
	}
	return ids
}

// TestUpsertSearch: an upsert replaces the row of the ids it names (old words no longer
// match, new ones do), adds the ids not yet there, and leaves every other row alone, even
// ids whose words are the same ("a.b" and "a-b") or a prefix ("board", "board-pro").
func TestUpsertSearch(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		now := time.Now()
		base := []store.SearchDoc{
			{ID: "board", Name: "Board", Description: "kanban columns", Kind: "plugin", UpdatedAt: now},
			{ID: "board-pro", Name: "Board Pro", Description: "kanban swimlanes", Kind: "plugin", UpdatedAt: now},
			{ID: "a.b", Name: "Dot", Description: "dotted", Kind: "plugin", UpdatedAt: now},
			{ID: "a-b", Name: "Dash", Description: "dashed", Kind: "plugin", UpdatedAt: now},
		}
		if err := s.ReplaceSearch(ctx, base); err != nil {
			t.Fatal(err)
		}
		err := s.UpsertSearch(ctx, []store.SearchDoc{
			{ID: "board", Name: "Board", Description: "first draft", Kind: "plugin", UpdatedAt: now},
			{ID: "a.b", Name: "Dot", Description: "renamed tidy", Kind: "plugin", UpdatedAt: now},
			{ID: "new-one", Name: "New", Description: "kanban fresh", Kind: "plugin", UpdatedAt: now},
			{ID: "board", Name: "Board", Description: "kanban scrum", Kind: "plugin", UpdatedAt: now}, // last wins
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			q    string
			want []string
		}{
			{"kanban", []string{"board", "board-pro", "new-one"}},
			{"columns", nil},
			{"draft", nil},
			{"scrum", []string{"board"}},
			{"dotted", nil},
			{"tidy", []string{"a.b"}},
			{"dashed", []string{"a-b"}},
			{"", []string{"board", "board-pro", "a-b", "a.b", "new-one"}},
		} {
			if diff := cmp.Diff(tt.want, searchIDs(t, s, tt.q)); diff != "" {
				t.Errorf("after upsert, Search(%q) (-want +got):\n%s", tt.q, diff)
			}
		}
	})
}

// TestDeleteSearch: a delete removes exactly the rows of the ids it names; an id without a
// row is not an error.
func TestDeleteSearch(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		now := time.Now()
		if err := s.ReplaceSearch(ctx, []store.SearchDoc{
			{ID: "board", Name: "Board", Description: "kanban", Kind: "plugin", UpdatedAt: now},
			{ID: "board-pro", Name: "Board Pro", Description: "kanban", Kind: "plugin", UpdatedAt: now},
			{ID: "a.b", Name: "Dot", Description: "kanban", Kind: "plugin", UpdatedAt: now},
			{ID: "a-b", Name: "Dash", Description: "kanban", Kind: "plugin", UpdatedAt: now},
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteSearch(ctx, []string{"board", "a-b", "missing"}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"board-pro", "a.b"}, searchIDs(t, s, "kanban")); diff != "" {
			t.Errorf("after delete (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"board-pro"}, searchIDs(t, s, "board")); diff != "" {
			t.Errorf("the deleted row's words still match (-want +got):\n%s", diff)
		}
	})
}

// TestReplaceSearchOneRowPerID: a full rebuild given an id twice keeps the last doc only.
func TestReplaceSearchOneRowPerID(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		now := time.Now()
		if err := s.ReplaceSearch(context.Background(), []store.SearchDoc{
			{ID: "dup", Name: "Dup", Description: "older words", Kind: "plugin", UpdatedAt: now},
			{ID: "dup", Name: "Dup", Description: "newer words", Kind: "plugin", UpdatedAt: now},
		}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"dup"}, searchIDs(t, s, "words")); diff != "" {
			t.Errorf("Search(words) (-want +got):\n%s", diff)
		}
		if ids := searchIDs(t, s, "older"); len(ids) != 0 {
			t.Errorf("Search(older) = %v, want nothing", ids)
		}
	})
}

package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// TestSearchRanksExactMatchesFirst: a package whose id or display name equals the query
// comes first, whatever the relevance score or the chosen sort says of the others.
func TestSearchRanksExactMatchesFirst(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		now := time.Now()
		docs := []store.SearchDoc{
			{ID: "board-pro", Name: "Board Pro", Description: "board board board board board", Kind: "plugin", UpdatedAt: now.Add(time.Hour), Downloads: 1000},
			{ID: "board", Name: "Kanban", Description: "A long description that says very little about the query word at all, on purpose", Kind: "plugin", UpdatedAt: now, Downloads: 1},
			{ID: "zzz-notes", Name: "Team Notes", Description: "notes notes notes", Kind: "plugin", UpdatedAt: now.Add(time.Hour), Downloads: 500},
			{ID: "aaa-notes", Name: "Notes", Description: "a place for things you write down, rarely the word itself", Kind: "plugin", UpdatedAt: now, Downloads: 2},
		}
		if err := s.ReplaceSearch(ctx, docs); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			q, sort, want string
		}{
			{"board", "", "board"}, {"board", "downloads", "board"}, {"board", "recent", "board"},
			{"BOARD", "", "board"}, {"notes", "", "aaa-notes"}, {"notes", "downloads", "aaa-notes"},
		} {
			got, _, err := s.Search(ctx, store.SearchQuery{Q: tt.q, Sort: tt.sort, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 || got[0] != tt.want {
				t.Errorf("Search(%q, sort=%q) = %v, want %q first", tt.q, tt.sort, got, tt.want)
			}
		}
	})
}

// An exact match is found whatever the case of a non-ASCII name or id: a search for
// "übersicht" ranks the display name "Übersicht" first, and "CAFÉ" the id "café".
func TestExactMatchFoldsEveryLetter(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		ctx := context.Background()
		docs := []store.SearchDoc{
			{ID: "zz-overview", Name: "Übersicht", Description: "an overview", Kind: "plugin", Downloads: 1},
			{ID: "aa-other", Name: "Other", Description: "übersicht übersicht übersicht", Kind: "plugin", Downloads: 100},
			{ID: "café", Name: "Coffee", Description: "café café", Kind: "plugin", Downloads: 1},
			{ID: "bb-more", Name: "More", Description: "café café café", Kind: "plugin", Downloads: 100},
		}
		if err := s.ReplaceSearch(ctx, docs); err != nil {
			t.Fatal(err)
		}
		for q, want := range map[string]string{"übersicht": "zz-overview", "ÜBERSICHT": "zz-overview", "CAFÉ": "café"} {
			ids, _, err := s.Search(ctx, store.SearchQuery{Q: q, Sort: "downloads", Limit: 10})
			if err != nil || len(ids) == 0 || ids[0] != want {
				t.Errorf("Search(%q) = %v (%v), want %s first (exact match)", q, ids, err, want)
			}
		}
	})
}

// Relevance weighs the columns as bm25's weights say (id 10, name 5, author and
// categories 2, description 1), on each backend: a word in the id outranks it in the name,
// which outranks it in the author, which outranks it in the description.
func TestSearchRelevanceWeighsColumns(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		now := time.Now()
		docs := []store.SearchDoc{
			{ID: "d-one", Name: "D", Description: "a note about widgets", Author: "x", Kind: "plugin", UpdatedAt: now},
			{ID: "c-one", Name: "C", Description: "a note", Author: "widgets inc", Kind: "plugin", UpdatedAt: now},
			{ID: "b-one", Name: "B widgets", Description: "a note", Author: "x", Kind: "plugin", UpdatedAt: now},
			{ID: "a-widgets", Name: "A", Description: "a note", Author: "x", Kind: "plugin", UpdatedAt: now},
		}
		if err := s.ReplaceSearch(ctx, docs); err != nil {
			t.Fatal(err)
		}
		got, _, err := s.Search(ctx, store.SearchQuery{Q: "widgets", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"a-widgets", "b-one", "c-one", "d-one"}, got); diff != "" {
			t.Errorf("Search(widgets) by relevance (-want +got):\n%s", diff)
		}
	})
}

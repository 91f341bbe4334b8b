package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/pluginyard/registry/store"
)

// TestSearchRanksExactMatchesFirst: a package whose id or display name equals the query
// comes first, whatever the relevance score or the chosen sort says of the others.
func TestSearchRanksExactMatchesFirst(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
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
}

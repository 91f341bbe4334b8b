package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// TestSearchExactFollowsUpserts: the exact-match keys follow a package's id and name
// through upserts and deletes: a package renamed away from the text no longer comes first
// as an exact match, and the one renamed to it does.
func TestSearchExactFollowsUpserts(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	now := time.Now()
	a := store.SearchDoc{ID: "a-tool", Name: "Kanban", Description: "kanban kanban kanban", Kind: "plugin", UpdatedAt: now, Downloads: 10}
	b := store.SearchDoc{ID: "b-tool", Name: "Other", Description: "a kanban", Kind: "plugin", UpdatedAt: now, Downloads: 1}
	c := store.SearchDoc{ID: "c-tool", Name: "Gone", Description: "kanban kanban kanban kanban", Kind: "plugin", UpdatedAt: now}
	if err := s.ReplaceSearch(ctx, []store.SearchDoc{a, b, c}); err != nil {
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
	if diff := cmp.Diff([]string{"b-tool", "a-tool"}, got); diff != "" {
		t.Errorf("Search(kanban) after renames (-want +got):\n%s", diff)
	}
	got, _, err = s.Search(ctx, store.SearchQuery{Q: "gone", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("Search(gone) after deleting c-tool = %v, want none", got)
	}
}

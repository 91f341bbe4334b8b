package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// TestTextSearchSorts: a text search orders its matches by the sort asked for, each
// sort's column read for it: name (Alpha, Mid, Zeta), recent (newest first), downloads
// (most first), none of which is the id or the rowid order of these rows.
func TestTextSearchSorts(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Second)
		docs := []store.SearchDoc{
			{ID: "s-a", Name: "Zeta tool", Description: "one", Kind: "plugin", UpdatedAt: now, Downloads: 5},
			{ID: "s-b", Name: "Alpha tool", Description: "two", Kind: "plugin", UpdatedAt: now.Add(-2 * time.Hour), Downloads: 1},
			{ID: "s-c", Name: "Mid tool", Description: "three", Kind: "plugin", UpdatedAt: now.Add(-time.Hour), Downloads: 9},
		}
		if err := s.ReplaceSearch(ctx, docs); err != nil {
			t.Fatal(err)
		}
		for sort, want := range map[string][]string{
			"name": {"s-b", "s-c", "s-a"}, "recent": {"s-a", "s-c", "s-b"}, "downloads": {"s-c", "s-a", "s-b"},
		} {
			for _, q := range []string{"tool", "too"} { // whole words, then a prefix
				got, total, err := s.Search(ctx, store.SearchQuery{Q: q, Sort: sort, Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" || total != 3 {
					t.Errorf("Search(%q, sort=%s): total %d, order (-want +got):\n%s", q, sort, total, diff)
				}
			}
		}
	})
}

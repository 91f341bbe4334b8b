package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// TestSearchCategoryIsLiteral: a category filter matches the category it names, never as a
// LIKE pattern: "%" and "_" are ordinary characters, and so is the escape character.
func TestSearchCategoryIsLiteral(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		now := time.Now()
		docs := []store.SearchDoc{
			{ID: "a", Name: "A", Categories: []string{"dev_tools"}, Kind: "plugin", UpdatedAt: now},
			{ID: "b", Name: "B", Categories: []string{"devxtools", "tools"}, Kind: "plugin", UpdatedAt: now},
			{ID: "c", Name: "C", Categories: []string{`back\slash`}, Kind: "plugin", UpdatedAt: now},
			{ID: "d", Name: "D", Categories: []string{"50%"}, Kind: "plugin", UpdatedAt: now},
		}
		if err := s.ReplaceSearch(ctx, docs); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			category string
			want     []string
		}{
			{"%", nil},
			{"_", nil},
			{"%%", nil},
			{"dev_tools", []string{"a"}},
			{"dev%", nil},
			{"50%", []string{"d"}},
			{`back\slash`, []string{"c"}},
			{`back\`, nil},
			{`\`, nil},
			{"tools", []string{"b"}},
		}
		for _, tt := range tests {
			got, total, err := s.Search(ctx, store.SearchQuery{Category: tt.category, Limit: 10})
			if err != nil {
				t.Fatalf("category %q: %v", tt.category, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" || total != len(tt.want) {
				t.Errorf("category %q: ids (-want +got):\n%s total=%d", tt.category, diff, total)
			}
		}
	})
}

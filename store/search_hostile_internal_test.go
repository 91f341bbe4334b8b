package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// countingReader counts the queries run on it.
type countingReader struct {
	searchReader
	queries int
}

func (c *countingReader) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	c.queries++
	return c.searchReader.QueryContext(ctx, query, args...)
}

func (c *countingReader) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	c.queries++
	return c.searchReader.QueryRowContext(ctx, query, args...)
}

// TestExactRowsBounded: the exact matches of a name SearchCap+50 packages share are read
// in two queries (the key lookup, then the rows), not one per match, and are the SearchCap
// first in rowid order, whatever the sort; one exact match takes two queries too.
func TestExactRowsBounded(t *testing.T) {
	sqliteOnly(t, "reads the store's SQLite pool directly")
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	var docs []SearchDoc
	for i := range SearchCap + 50 {
		docs = append(docs, SearchDoc{ID: fmt.Sprintf("twin-%04d", i), Name: "Twin", Kind: "plugin", UpdatedAt: time.Now(), Downloads: int64(i)})
	}
	docs = append(docs, SearchDoc{ID: "single", Name: "Single Twin", Kind: "plugin", UpdatedAt: time.Now()})
	if err := s.ReplaceSearch(ctx, docs); err != nil {
		t.Fatal(err)
	}
	var want []string // rowid order: most downloaded first
	for i := SearchCap + 49; i >= 50; i-- {
		want = append(want, fmt.Sprintf("twin-%04d", i))
	}
	for _, tt := range []struct {
		q    SearchQuery
		want []string
	}{
		{SearchQuery{Q: "twin"}, want}, {SearchQuery{Q: "TWIN", Sort: "name"}, want}, {SearchQuery{Q: "single twin"}, []string{"single"}},
	} {
		rd := &countingReader{searchReader: s.r}
		rows, err := exactRows(ctx, rd, s.searchSQL(), tt.q)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, len(rows))
		for i, r := range rows {
			ids[i] = r.id
		}
		if diff := cmp.Diff(tt.want, ids); diff != "" || rd.queries != 2 {
			t.Errorf("exactRows(%+v): %d queries, want 2; ids (-want +got):\n%s", tt.q, rd.queries, diff)
		}
	}
}

// TestSearchWords: a search's words are its distinct words (as the index folds them:
// case and accents), first spelling kept, in order, at most SearchWords.
func TestSearchWords(t *testing.T) {
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"", nil},
		{"plugin", []string{"plugin"}},
		{"Plugin plugin PLUGIN tools", []string{"Plugin", "tools"}},
		{"café cafe CAFÉ über uber", []string{"café", "über"}},
		{"a b c d e f g h i j", []string{"a", "b", "c", "d", "e", "f", "g", "h"}},
		{"a a a a a a a a a a b", []string{"a", "b"}},
		{"x-1 x.1 x_1 y", []string{"x", "1", "y"}},
	} {
		if got := searchWords(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("searchWords(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestFTSCategoryTerms: SQLite's match asks the index for each distinct word of the
// category once, at most SearchWords of them, however often the category repeats one.
func TestFTSCategoryTerms(t *testing.T) {
	for _, tt := range []struct {
		category, want string
	}{
		{"", `("plugin"*)`},
		{"tools", `("plugin"*) AND categories : ("tools")`},
		{strings.TrimSuffix(strings.Repeat("a-", 32), "-"), `("plugin"*) AND categories : ("a")`},
		{"A-b-a-c-d-e-f-g-h-i-j", `("plugin"*) AND categories : ("A" "b" "c" "d" "e" "f" "g" "h")`},
	} {
		_, args := ftsSearch{}.text([]string{"plugin"}, false, tt.category, 0, 1)
		if got := args[0]; got != tt.want {
			t.Errorf("text(category %q) matches %q, want %q", tt.category, got, tt.want)
		}
	}
}

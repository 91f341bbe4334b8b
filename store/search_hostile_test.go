package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// sharedNameDocs is a catalogue where SearchCap+50 plugins and 3 canvases share twinName
// (twin-NNNN, downloads 10,000+i: twin-1049 is the most downloaded) and 20 more
// downloaded plugins (other-NN) only say it in their description.
func sharedNameDocs() []store.SearchDoc {
	now := time.Now()
	var docs []store.SearchDoc
	for i := range store.SearchCap + 50 {
		docs = append(docs, store.SearchDoc{ID: fmt.Sprintf("twin-%04d", i), Name: twinName, Description: "one of many",
			Kind: "plugin", UpdatedAt: now, Downloads: int64(10_000 + i)})
	}
	for i := range 3 {
		docs = append(docs, store.SearchDoc{ID: fmt.Sprintf("canvas-twin-%d", i), Name: twinName, Kind: "canvas", UpdatedAt: now, Downloads: int64(i)})
	}
	for i := range 20 {
		docs = append(docs, store.SearchDoc{ID: fmt.Sprintf("other-%02d", i), Name: fmt.Sprintf("Other %d", i), Description: "twin tools",
			Kind: "plugin", UpdatedAt: now, Downloads: int64(1_000_000 + i)})
	}
	return docs
}

// TestSearchSharedName: when more than SearchCap packages share the searched name, the
// exact matches are the SearchCap most downloaded of them (the bound the window of the
// other matches has), in the order asked for, then the window's other matches; pages
// cross from one to the other, the kind filter holds, and the total stays SearchCap+1.
func TestSearchSharedName(t *testing.T) {
	var byDownloads []string // what sort=downloads lists: the exact matches, then the others
	for i := store.SearchCap + 49; i >= 50; i-- {
		byDownloads = append(byDownloads, fmt.Sprintf("twin-%04d", i))
	}
	for i := 19; i >= 0; i-- {
		byDownloads = append(byDownloads, fmt.Sprintf("other-%02d", i))
	}
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		if err := s.ReplaceSearch(ctx, sharedNameDocs()); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			q     store.SearchQuery
			want  []string
			total int
		}{
			{store.SearchQuery{Q: twinName, Sort: "downloads", Limit: 2000}, byDownloads, store.SearchCap + 1},
			{store.SearchQuery{Q: strings.ToUpper(twinName), Sort: "downloads", Offset: store.SearchCap - 10, Limit: 20}, byDownloads[store.SearchCap-10 : store.SearchCap+10], store.SearchCap + 1},
			{store.SearchQuery{Q: twinName, Sort: "name", Kind: "canvas", Limit: 10}, []string{"canvas-twin-0", "canvas-twin-1", "canvas-twin-2"}, 3},
		} {
			ids, total, err := s.Search(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids); diff != "" || total != tt.total {
				t.Errorf("Search(%+v): total %d (want %d), ids (-want +got):\n%s", tt.q, total, tt.total, diff)
			}
		}
		ids, _, err := s.Search(ctx, store.SearchQuery{Q: twinName, Limit: 2000}) // relevance: ties among the exact matches by id
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Sorted(slices.Values(byDownloads[:store.SearchCap]))
		if len(ids) != len(byDownloads) || !slices.Equal(ids[:store.SearchCap], want) {
			t.Errorf("Search(%q) by relevance: %d ids, want %d: the %d most downloaded exact matches first, by id", twinName, len(ids), len(byDownloads), store.SearchCap)
		}
	})
}

// wordCapDocs: "eight" says the first eight words of capText, "name-ten" is named
// capText (its ten words), "alpha-only" says only its first word.
func wordCapDocs() []store.SearchDoc {
	now := time.Now()
	return []store.SearchDoc{
		{ID: "eight", Name: "Eight", Description: "alpha bravo charlie delta echo foxtrot golf hotel", Kind: "plugin", UpdatedAt: now},
		{ID: "name-ten", Name: capText, Description: "named after the text", Kind: "plugin", UpdatedAt: now},
		{ID: "alpha-only", Name: "Alpha Only", Description: "alpha", Kind: "plugin", UpdatedAt: now},
	}
}

// capText is a text of SearchWords+2 distinct words.
const capText = "Alpha Bravo Charlie Delta Echo Foxtrot Golf Hotel India Juliett"

// TestSearchWordCap: a text search matches the first SearchWords distinct words of its
// text and ignores the rest (a package with only those words matches; one named the
// whole text is still the exact match, first); a word repeated, in any case or accent,
// counts once, so the words after it still count.
func TestSearchWordCap(t *testing.T) {
	if store.SearchWords != 8 {
		t.Fatalf("SearchWords = %d: capText and wordCapDocs are written for 8", store.SearchWords)
	}
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		if err := s.ReplaceSearch(ctx, wordCapDocs()); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			q    store.SearchQuery
			want []string
		}{
			{store.SearchQuery{Q: capText, Limit: 10}, []string{"name-ten", "eight"}},
			{store.SearchQuery{Q: capText, Sort: "name", Kind: "plugin", Limit: 10}, []string{"name-ten", "eight"}},
			{store.SearchQuery{Q: "Alpha ALPHA alpha aLpha alPha alpHa alphA ALpha álpha ÁLPHA bravo", Sort: "name", Limit: 10}, []string{"name-ten", "eight"}},
			{store.SearchQuery{Q: strings.Repeat("alpha ", 30) + "hotel", Sort: "name", Limit: 10}, []string{"name-ten", "eight"}},
		} {
			ids, total, err := s.Search(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids); diff != "" || total != len(tt.want) {
				t.Errorf("Search(%q): total %d, ids (-want +got):\n%s", tt.q.Q, total, diff)
			}
		}
	})
}

// TestSearchCategoryOfRepeatedWords: a category with repeated words matches only the
// packages that have it literally, whatever the index was asked for its words.
func TestSearchCategoryOfRepeatedWords(t *testing.T) {
	long := strings.TrimSuffix(strings.Repeat("a-", 32), "-")
	now := time.Now()
	docs := []store.SearchDoc{
		{ID: "aba", Name: "Plugin ABA", Categories: []string{"a-b-a-c"}, Kind: "plugin", UpdatedAt: now},
		{ID: "abc", Name: "Plugin ABC", Categories: []string{"a-b-c"}, Kind: "plugin", UpdatedAt: now},
		{ID: "long", Name: "Plugin Long", Categories: []string{long}, Kind: "plugin", UpdatedAt: now},
		{ID: "short", Name: "Plugin Short", Categories: []string{"a-a"}, Kind: "plugin", UpdatedAt: now},
	}
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		if err := s.ReplaceSearch(ctx, docs); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			category string
			want     []string
		}{
			{"a-b-a-c", []string{"aba"}}, {"a-b-c", []string{"abc"}}, {"c-b-a", nil}, {long, []string{"long"}}, {"a-a", []string{"short"}},
		} {
			ids, total, err := s.Search(ctx, store.SearchQuery{Q: "plugin", Category: tt.category, Sort: "name", Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids); diff != "" || total != len(tt.want) {
				t.Errorf("Search(plugin, category %q): total %d, ids (-want +got):\n%s", tt.category, total, diff)
			}
		}
	})
}

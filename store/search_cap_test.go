package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pluginyard/registry/store"
)

// TestSearchTextBounded: a word in more rows than SearchCap counts SearchCap+1 ("more"),
// pages through a window of SearchCap (each kind's most downloaded, plugins first, then
// canvases), and still puts an exact name match first though it is outside the window;
// kind and category filters hold on every row returned.
func TestSearchTextBounded(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		now := time.Now()
		n := store.SearchCap + 50
		docs := make([]store.SearchDoc, 0, n+1)
		for i := range n {
			kind := "plugin"
			if i%10 == 0 {
				kind = "canvas"
			}
			docs = append(docs, store.SearchDoc{ID: fmt.Sprintf("p%05d", i), Name: fmt.Sprintf("P %d", i), Description: "common word",
				Categories: []string{fmt.Sprintf("c%d", i%3)}, Kind: kind, UpdatedAt: now, Downloads: int64(10 * (n - i))})
		}
		docs = append(docs, store.SearchDoc{ID: "zz-exact", Name: "Common", Description: "common", Kind: "canvas", UpdatedAt: now})
		if err := s.ReplaceSearch(ctx, docs); err != nil {
			t.Fatal(err)
		}
		ids, total, err := s.Search(ctx, store.SearchQuery{Q: "common", Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if total != store.SearchCap+1 || len(ids) != 5 || ids[0] != "zz-exact" {
			t.Errorf("Search(common) = %v total %d, want zz-exact first and total %d", ids, total, store.SearchCap+1)
		}
		seen := map[string]bool{}
		for offset := 0; offset < store.SearchCap+10; offset += 100 {
			page, _, err := s.Search(ctx, store.SearchQuery{Q: "common", Sort: "downloads", Limit: 100, Offset: offset})
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range page {
				if seen[id] {
					t.Fatalf("%s listed twice while paging", id)
				}
				seen[id] = true
			}
		}
		if len(seen) != store.SearchCap+1 || !seen["zz-exact"] || !seen["p00000"] || !seen[fmt.Sprintf("p%05d", n-1)] || seen["p01040"] {
			t.Errorf("paged %d ids (want every plugin, the most downloaded canvases up to %d, and the exact match)", len(seen), store.SearchCap)
		}
		for _, q := range []store.SearchQuery{{Q: "common", Kind: "canvas", Limit: 200}, {Q: "common", Category: "c1", Limit: 200}} {
			page, total, err := s.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range page {
				var i int
				if id == "zz-exact" && q.Kind == "canvas" {
					continue
				}
				if _, err := fmt.Sscanf(id, "p%d", &i); err != nil || (q.Kind == "canvas" && i%10 != 0) || (q.Category == "c1" && i%3 != 1) {
					t.Errorf("Search(%+v) returned %s", q, id)
				}
			}
			if len(page) == 0 || total == 0 {
				t.Errorf("Search(%+v) = nothing", q)
			}
		}
	})
}

// TestUpsertKeepsPlace: a replaced row keeps its place in the download order (its rowid),
// so an update does not drop a popular package out of the ranked window.
func TestUpsertKeepsPlace(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		now := time.Now()
		var docs []store.SearchDoc
		for i := range store.SearchCap + 5 {
			docs = append(docs, store.SearchDoc{ID: fmt.Sprintf("p%05d", i), Name: fmt.Sprintf("P %d", i), Description: "common",
				Kind: "plugin", UpdatedAt: now, Downloads: int64(100000 - i)})
		}
		if err := s.ReplaceSearch(ctx, docs); err != nil {
			t.Fatal(err)
		}
		top := docs[0]
		top.Description = "common renamed"
		if err := s.UpsertSearch(ctx, []store.SearchDoc{top}); err != nil {
			t.Fatal(err)
		}
		ids, _, err := s.Search(ctx, store.SearchQuery{Q: "common", Sort: "downloads", Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != 1 || ids[0] != top.ID {
			t.Errorf("after upserting the most downloaded, Search(common, downloads) = %v, want %s first", ids, top.ID)
		}
	})
}

// TestSearchWholeWordsFirst: a word that matches few packages whole also matches as a
// prefix ("alpha" finds "alphabet"); one that matches more than SearchCap whole fills the
// window with whole-word matches, however popular a prefix-only match is.
func TestSearchWholeWordsFirst(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		now := time.Now()
		docs := []store.SearchDoc{{ID: "prefix-only", Name: "Prefix", Description: "alphabet soup", Kind: "plugin", UpdatedAt: now, Downloads: 1 << 40}}
		for i := range 3 {
			docs = append(docs, store.SearchDoc{ID: fmt.Sprintf("w%05d", i), Name: "W", Description: "alpha", Kind: "plugin", UpdatedAt: now, Downloads: int64(i)})
		}
		if err := s.ReplaceSearch(ctx, docs); err != nil {
			t.Fatal(err)
		}
		if ids := searchIDs(t, s, "alpha"); len(ids) != 4 {
			t.Errorf("Search(alpha) among few whole-word matches = %v, want the prefix match too", ids)
		}
		for i := 3; i <= store.SearchCap; i++ {
			docs = append(docs, store.SearchDoc{ID: fmt.Sprintf("w%05d", i), Name: "W", Description: "alpha", Kind: "plugin", UpdatedAt: now, Downloads: int64(i)})
		}
		if err := s.ReplaceSearch(ctx, docs); err != nil {
			t.Fatal(err)
		}
		ids, total, err := s.Search(ctx, store.SearchQuery{Q: "alpha", Sort: "downloads", Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if total != store.SearchCap+1 || len(ids) == 0 || ids[0] == "prefix-only" {
			t.Errorf("Search(alpha) over %d whole-word matches = %v total %d, want whole words only", store.SearchCap+1, ids, total)
		}
	})
}

// TestSearchWholeWordsAreWords: in the whole-word pass too, "or" is a word, not an
// operator: "alpha or omega" matches the one package that says all three, however many
// say alpha.
func TestSearchWholeWordsAreWords(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		now := time.Now()
		docs := []store.SearchDoc{{ID: "both", Name: "Both", Description: "alpha or omega", Kind: "plugin", UpdatedAt: now}}
		for i := range store.SearchCap + 1 {
			docs = append(docs, store.SearchDoc{ID: fmt.Sprintf("w%05d", i), Name: "W", Description: "alpha", Kind: "plugin", UpdatedAt: now})
		}
		if err := s.ReplaceSearch(ctx, docs); err != nil {
			t.Fatal(err)
		}
		ids, total, err := s.Search(ctx, store.SearchQuery{Q: "alpha or omega", Limit: 5})
		if err != nil || total != 1 || !slices.Equal(ids, []string{"both"}) {
			t.Errorf("Search(alpha or omega) = %v total %d (%v), want [both] total 1", ids, total, err)
		}
	})
}

// widestQuery is the costliest text the API lets through (server/api.go caps q at 200
// characters): 100 one-letter words, a through z over and over. Whole, they match no
// package, so every word becomes a one-letter prefix term, shorter than any prefix
// index, each merging the matches of every indexed word with that initial.
func widestQuery() string {
	words := make([]string, 100)
	for i := range words {
		words[i] = string(rune('a' + i%26))
	}
	return strings.Join(words, " ")
}

// TestSearchWidestQuery: the widest query still finds exactly the package whose text has
// a word of every initial, and counts no other, among more rows than SearchCap.
func TestSearchWidestQuery(t *testing.T) {
	q := widestQuery()
	if len(q) != 199 {
		t.Fatalf("widestQuery is %d characters, want the API's 200 at most", len(q))
	}
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		docs := searchDocsN(store.SearchCap + 50)
		docs = append(docs, store.SearchDoc{ID: "every-initial", Name: "Every Initial", Kind: "plugin", UpdatedAt: time.Now(),
			Description: "alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu"})
		if err := s.ReplaceSearch(ctx, docs); err != nil {
			t.Fatal(err)
		}
		res, err := s.SearchCounted(ctx, store.SearchQuery{Q: q, Limit: 24})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.IDs, []string{"every-initial"}) || res.Total != 1 {
			t.Errorf("SearchCounted(%d one-letter words) = %v total %d, want [every-initial] total 1", len(strings.Fields(q)), res.IDs, res.Total)
		}
	})
}

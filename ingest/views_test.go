package ingest_test

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
)

// viewsCatalog is n items over three kinds, four categories (some items in two, one
// category named twice), two publishers, every 7th featured, with ties in downloads and
// update times so the id tie-break shows.
func viewsCatalog(n int) *ingest.Catalog {
	kinds := []string{"plugin", "canvas", "extension"}
	cats := []string{"tools", "connector", "automation", "analytics"}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var items []*ingest.Item
	for i := range n {
		it := &ingest.Item{ID: fmt.Sprintf("p%05d", i), Kind: kinds[i%3], Downloads: int64(i % 5), UpdatedAt: base.Add(time.Duration(i%4) * time.Hour)}
		c := []string{cats[i%4]}
		if i%3 == 0 {
			c = append(c, cats[(i+1)%4], cats[i%4]) // a category named twice counts once
		}
		owners, repo := []string{fmt.Sprintf("pub%d", i%2)}, fmt.Sprintf("org/repo%d", i%3)
		if it.Kind == "extension" {
			it.ExtEntry = &index.ExtensionEntry{Name: it.ID, Repo: repo, Categories: c, Featured: i%7 == 0, Owners: owners}
		} else {
			it.Entry = &index.Entry{ID: it.ID, Repo: repo, Kind: it.Kind, Categories: c, Featured: i%7 == 0, Owners: owners}
		}
		items = append(items, it)
	}
	return ingest.NewCatalog(items)
}

func ids(items []*ingest.Item) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

// bruteList filters and sorts every item, as the search table did per request.
func bruteList(cat *ingest.Catalog, kind, category, sort string) []string {
	var out []*ingest.Item
	for it := range cat.All() {
		if (kind == "" || it.Kind == kind) && (category == "" || slices.Contains(it.Categories(), category)) {
			out = append(out, it)
		}
	}
	slices.SortFunc(out, func(a, b *ingest.Item) int {
		switch sort {
		case ingest.SortDownloads:
			return cmp.Or(cmp.Compare(b.Downloads, a.Downloads), strings.Compare(a.ID, b.ID))
		case ingest.SortRecent:
			return cmp.Or(b.UpdatedAt.Compare(a.UpdatedAt), strings.Compare(a.ID, b.ID))
		}
		return cmp.Or(strings.Compare(strings.ToLower(a.Name()), strings.ToLower(b.Name())), strings.Compare(a.ID, b.ID))
	})
	return ids(out)
}

// TestViewsListEqualsBruteForce: every (kind, category, sort) listing, paged through, is
// the brute-force filter and sort of the catalogue, and its total is the brute-force count.
func TestViewsListEqualsBruteForce(t *testing.T) {
	cat := viewsCatalog(60)
	v := cat.Views()
	for _, kind := range []string{"", "plugin", "canvas", "extension"} {
		for _, category := range []string{"", "tools", "connector", "automation", "analytics", "missing"} {
			for _, sort := range []string{"", ingest.SortRelevance, ingest.SortName, ingest.SortDownloads, ingest.SortRecent} {
				want := bruteList(cat, kind, category, sort)
				var got []string
				for offset := 0; ; offset += 7 {
					page, total := v.List(kind, category, sort, offset, 7)
					if total != len(want) {
						t.Fatalf("List(%q, %q, %q) total = %d, brute force %d", kind, category, sort, total, len(want))
					}
					if len(page) == 0 {
						break
					}
					got = append(got, ids(page)...)
				}
				if diff := gocmp.Diff(want, got, cmpEmpty); diff != "" {
					t.Errorf("List(%q, %q, %q) (-brute +views):\n%s", kind, category, sort, diff)
				}
			}
		}
	}
}

var cmpEmpty = gocmp.Transformer("nilEmpty", func(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
})

// TestViewsCategoryCountsEqualBruteForce: each count is the number of packages of that
// kind naming the category (once each, however often it is named).
func TestViewsCategoryCountsEqualBruteForce(t *testing.T) {
	cat := viewsCatalog(60)
	for _, kind := range []string{"", "plugin", "canvas", "extension"} {
		want := map[string]int{}
		for it := range cat.All() {
			if kind != "" && it.Kind != kind {
				continue
			}
			seen := map[string]bool{}
			for _, c := range it.Categories() {
				if !seen[c] {
					seen[c] = true
					want[c]++
				}
			}
		}
		if diff := gocmp.Diff(want, cat.Views().CategoryCounts(kind)); diff != "" {
			t.Errorf("CategoryCounts(%q) (-brute +views):\n%s", kind, diff)
		}
	}
}

// TestViewsFeaturedAndPublishers: the featured items of each kind, and each publisher's
// items, repositories and authors.
func TestViewsFeaturedAndPublishers(t *testing.T) {
	cat := viewsCatalog(30)
	v := cat.Views()
	for _, kind := range []string{"", "plugin", "canvas", "extension"} {
		var want []string
		for it := range cat.All() {
			if it.Featured() && (kind == "" || it.Kind == kind) {
				want = append(want, it.ID)
			}
		}
		if diff := gocmp.Diff(want, ids(v.Featured(kind)), cmpEmpty); diff != "" {
			t.Errorf("Featured(%q) (-want +got):\n%s", kind, diff)
		}
	}
	p := v.Publisher("pub1")
	if p == nil {
		t.Fatal("Publisher(pub1) = nil")
	}
	var want []string
	for i := 1; i < 30; i += 2 {
		want = append(want, fmt.Sprintf("p%05d", i))
	}
	if diff := gocmp.Diff(want, ids(p.Items)); diff != "" {
		t.Errorf("Publisher(pub1).Items (-want +got):\n%s", diff)
	}
	if diff := gocmp.Diff([]string{"org/repo1", "org/repo0", "org/repo2"}, p.Repos); diff != "" {
		t.Errorf("Publisher(pub1).Repos (-want +got):\n%s", diff)
	}
	if diff := gocmp.Diff([]string{"org"}, p.Authors); diff != "" {
		t.Errorf("Publisher(pub1).Authors (-want +got):\n%s", diff)
	}
	if v.Publisher("nobody") != nil {
		t.Error("Publisher(nobody) != nil")
	}
}

// TestViewsWindow: offsets past the end, negative offsets and limits answer nothing.
func TestViewsWindow(t *testing.T) {
	v := viewsCatalog(10).Views()
	for _, tt := range []struct{ offset, limit, want int }{{0, 4, 4}, {8, 4, 2}, {10, 4, 0}, {-1, 4, 0}, {0, 0, 0}, {0, -3, 0}, {1 << 40, 4, 0}} {
		if got, total := v.List("", "", "", tt.offset, tt.limit); len(got) != tt.want || total != 10 {
			t.Errorf("List(offset %d, limit %d) = %d items of %d, want %d of 10", tt.offset, tt.limit, len(got), total, tt.want)
		}
	}
}

// TestViewsMemoized: a catalog computes its views once.
func TestViewsMemoized(t *testing.T) {
	cat := viewsCatalog(10)
	if cat.Views() != cat.Views() {
		t.Error("Views() computed twice for one catalog")
	}
}

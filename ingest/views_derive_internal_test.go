package ingest

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/plist"
	"github.com/pluginyard/registry/store"
)

// deriveItem is a catalog item with the fields views read.
func deriveItem(r *rand.Rand, id string) *Item {
	kinds := []string{"plugin", "canvas", "extension"}
	cats := []string{"tools", "connector", "automation", "analytics"}
	c := []string{cats[r.IntN(4)]}
	if r.IntN(3) == 0 {
		c = append(c, cats[r.IntN(4)])
	}
	it := &Item{ID: id, Kind: kinds[r.IntN(3)], Downloads: int64(r.IntN(5)), UpdatedAt: time.Unix(int64(r.IntN(4)*3600), 0)}
	owners := []string{fmt.Sprintf("pub%d", r.IntN(3))}
	if it.Kind == "extension" {
		it.ExtEntry = &index.ExtensionEntry{Name: id, Repo: "org/" + id, Categories: c, Featured: r.IntN(6) == 0, Owners: owners}
	} else {
		it.Entry = &index.Entry{ID: id, Repo: "org/" + id, Kind: it.Kind, Categories: c, Featured: r.IntN(6) == 0, Owners: owners}
	}
	return it
}

// viewsDump is everything views answer, for comparing two.
func viewsDump(v *Views) map[string][]string {
	out := map[string][]string{}
	for _, kind := range []string{"", "plugin", "canvas", "extension"} {
		for _, cat := range []string{"", "tools", "connector", "automation", "analytics"} {
			for _, sort := range []string{SortName, SortDownloads, SortRecent} {
				items, total := v.List(kind, cat, sort, 0, 1<<30)
				key := kind + "/" + cat + "/" + sort
				out[key] = append([]string{fmt.Sprint(total)}, idsOf(items)...)
			}
			if cat == "" {
				out["featured/"+kind] = idsOf(v.Featured(kind))
				for c, n := range v.CategoryCounts(kind) {
					out["counts/"+kind] = append(out["counts/"+kind], fmt.Sprintf("%s=%d", c, n))
				}
				slices.Sort(out["counts/"+kind])
			}
		}
	}
	for _, p := range []string{"pub0", "pub1", "pub2"} {
		if pv := v.Publisher(p); pv != nil {
			out["publisher/"+p] = slices.Concat(idsOf(pv.Items), pv.Repos, pv.Authors)
		}
	}
	return out
}

func idsOf(items []*Item) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

// TestDeriveViewsEqualsBuild: views derived from the previous catalog's, after a few
// items are replaced, removed or added (as a publish changes the catalogue's list: a new
// version sharing every chunk but the changed ones), answer exactly what views built anew
// answer, for catalogues of one chunk and of many.
func TestDeriveViewsEqualsBuild(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		n := 20 + r.IntN(60)
		if round%4 == 0 {
			n = 600 + r.IntN(1500) // several chunks: the walk skips the shared ones
		}
		prev := make([]*Item, 0, n)
		for i := range n {
			prev = append(prev, deriveItem(r, fmt.Sprintf("p%04d", i*2)))
		}
		pv := buildViews(prev)
		prevL := plist.Of(prev)
		next := prevL
		for range 1 + r.IntN(3) {
			switch i := r.IntN(next.Len()); r.IntN(3) {
			case 0: // replaced: same id, new fields
				next = next.Set(i, deriveItem(r, next.At(i).ID))
			case 1: // removed
				next = next.Delete(i)
			default: // added, between two ids
				id := fmt.Sprintf("p%04d", r.IntN(n)*2+1)
				if j, found := next.Search(func(it *Item) int { return strings.Compare(it.ID, id) }); !found {
					next = next.Insert(j, deriveItem(r, id))
				}
			}
		}
		dv := deriveViews(prevL, pv, next)
		if dv == nil {
			t.Fatalf("round %d: a change of a few items was not derived", round)
		}
		if diff := cmp.Diff(viewsDump(buildViews(next.Slice())), viewsDump(dv)); diff != "" {
			t.Fatalf("round %d: derived views differ from built ones (-built +derived):\n%s", round, diff)
		}
		if diff := cmp.Diff(viewsDump(buildViews(prev)), viewsDump(pv)); diff != "" {
			t.Fatalf("round %d: deriving changed the previous views (-before +after):\n%s", round, diff)
		}
	}
}

// TestDeriveViewsRefusesLargeChanges: past one item in maxDerived, views are built anew.
func TestDeriveViewsRefusesLargeChanges(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var prev, next []*Item
	for i := range 80 {
		prev = append(prev, deriveItem(r, fmt.Sprintf("p%03d", i)))
		next = append(next, deriveItem(r, fmt.Sprintf("p%03d", i)))
	}
	if deriveViews(plist.Of(prev), buildViews(prev), plist.Of(next)) != nil {
		t.Error("every item replaced, and the views were derived")
	}
}

// A catalog's views derive from its basis, the catalog in force before it whose views were
// computed; a catalog whose views nobody asked for passes its own basis on, so a catalog
// holds at most one older one, and none once its views are computed.
func TestCatalogViewsBasis(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var items []*Item
	for i := range 200 {
		items = append(items, deriveItem(r, fmt.Sprintf("p%03d", i)))
	}
	c1 := NewCatalog(items)
	v1 := c1.Views()
	next := slices.Clone(items)
	next[7] = deriveItem(r, next[7].ID)
	c2 := NewCatalog(next) // never asked for its views
	c2.views.basis.Store(viewsBasis(c1))
	last := slices.Clone(next)
	last[9] = deriveItem(r, last[9].ID)
	c3 := NewCatalog(last)
	c3.views.basis.Store(viewsBasis(c2))
	if got := c3.views.basis.Load(); got != c1 {
		t.Fatalf("the basis after a catalog without views is %p, want the one before it (%p)", got, c1)
	}
	v3 := c3.Views()
	if diff := cmp.Diff(viewsDump(buildViews(last)), viewsDump(v3)); diff != "" {
		t.Errorf("derived views differ from built ones (-built +derived):\n%s", diff)
	}
	if c3.views.basis.Load() != nil {
		t.Error("a catalog keeps its basis after its views were computed")
	}
	shared := false
	for k, o := range v3.lists {
		shared = shared || v1.lists[k] == o
	}
	if !shared {
		t.Error("no list is shared with the basis's views: they were built, not derived")
	}
	if viewsBasis(c3) != c3 {
		t.Error("a catalog whose views are computed is not the next one's basis")
	}
}

// A publish installs a catalog whose views derive from the catalog in force before it.
func TestPublishCatalogViewsBasis(t *testing.T) {
	s := newPublishService(t, publishList(), Config{})
	publishOK(t, s, "acme-hello", "1.0.0", "first")
	before := s.Catalog()
	before.Views()
	publishOK(t, s, "acme-hello", "1.1.0", "second")
	after := s.Catalog()
	if after == before || after.views.basis.Load() != before {
		t.Fatalf("the catalog after a publish has basis %p, want the one before (%p)", after.views.basis.Load(), before)
	}
	if diff := cmp.Diff(viewsDump(buildViews(after.Items())), viewsDump(after.Views())); diff != "" {
		t.Errorf("views after a publish (-built +derived):\n%s", diff)
	}
}

// itemDiffOf is diffItems item by item over two sorted slices (no chunk skipped): what
// the chunk walk must find.
func itemDiffOf(prev, next []*Item) itemDiff {
	d := itemDiff{gone: map[*Item]bool{}}
	i, j := 0, 0
	for i < len(prev) || j < len(next) {
		switch {
		case j == len(next) || (i < len(prev) && prev[i].ID < next[j].ID):
			d.gone[prev[i]] = true
			i++
		case i == len(prev) || next[j].ID < prev[i].ID:
			d.added = append(d.added, next[j])
			j++
		default:
			if prev[i] != next[j] {
				d.gone[prev[i]] = true
				d.added = append(d.added, next[j])
			}
			i, j = i+1, j+1
		}
	}
	return d
}

// TestDiffItemsChunks: diffItems, which skips the chunks two lists share, finds what an
// item-by-item walk finds for every shape of change a publish makes: an insert that
// splits a chunk, a delete that empties one (the last, a middle one), and changes at the
// first and the last item.
func TestDiffItemsChunks(t *testing.T) {
	item := func(n int) *Item { return &Item{ID: fmt.Sprintf("p%05d", n)} }
	after := func(l plist.List[*Item], i int) *Item { return &Item{ID: l.At(i).ID + "x"} } // between i and i+1
	evens := func(n int) plist.List[*Item] {                                               // ids 0, 2, 4, …: odd ones insert between
		items := make([]*Item, n)
		for i := range items {
			items[i] = item(2 * i)
		}
		return plist.Of(items)
	}
	full511 := evens(600) // chunk 1 grown to 511 items: one more splits it
	for k := range 255 {
		full511 = full511.Insert(257+2*k, item(2*(256+k)+1))
	}
	single := evens(768) // chunk 1 shrunk to one item: deleting it empties the chunk
	for range 255 {
		single = single.Delete(256)
	}
	tests := []struct {
		name   string
		prev   plist.List[*Item]
		change func(l plist.List[*Item]) plist.List[*Item]
		chunks int // how many chunks the changed list has
	}{
		{"none", evens(600), func(l plist.List[*Item]) plist.List[*Item] { return l }, 3},
		{"first replaced", evens(600), func(l plist.List[*Item]) plist.List[*Item] { return l.Set(0, item(0)) }, 3},
		{"last replaced", evens(600), func(l plist.List[*Item]) plist.List[*Item] { return l.Set(599, item(1198)) }, 3},
		{"first deleted", evens(600), func(l plist.List[*Item]) plist.List[*Item] { return l.Delete(0) }, 3},
		{"last deleted", evens(600), func(l plist.List[*Item]) plist.List[*Item] { return l.Delete(599) }, 3},
		{"inserted before the first", evens(600), func(l plist.List[*Item]) plist.List[*Item] { return l.Insert(0, &Item{ID: "a"}) }, 3},
		{"inserted after the last", evens(600), func(l plist.List[*Item]) plist.List[*Item] { return l.Insert(600, item(1201)) }, 3},
		{"inserted at a chunk's start", evens(600), func(l plist.List[*Item]) plist.List[*Item] { return l.Insert(256, item(511)) }, 3},
		{"insert splits a chunk", full511, func(l plist.List[*Item]) plist.List[*Item] { return l.Insert(300, after(l, 299)) }, 4},
		{"insert splits a chunk, then one after it changes", full511, func(l plist.List[*Item]) plist.List[*Item] {
			l = l.Insert(300, after(l, 299))
			return l.Set(l.Len()-1, item(1198))
		}, 4},
		{"delete empties the last chunk", evens(257), func(l plist.List[*Item]) plist.List[*Item] { return l.Delete(256) }, 1},
		{"delete empties a middle chunk", single, func(l plist.List[*Item]) plist.List[*Item] { return l.Delete(256) }, 2},
		{"delete empties a middle chunk, then the last changes", single, func(l plist.List[*Item]) plist.List[*Item] {
			l = l.Delete(256)
			return l.Set(l.Len()-1, item(1534))
		}, 2},
		{"every chunk changed", evens(600), func(l plist.List[*Item]) plist.List[*Item] {
			return l.Set(0, item(0)).Set(300, item(600)).Set(599, item(1198))
		}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := tt.change(tt.prev)
			if got := len(next.Chunks()); got != tt.chunks {
				t.Fatalf("the changed list has %d chunks, want %d: the case is not the shape it names", got, tt.chunks)
			}
			if ids := idsOf(next.Slice()); !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
				t.Fatal("the changed list is not sorted by distinct ids, as a catalogue is")
			}
			got, ok := diffItems(tt.prev, next, math.MaxInt)
			want := itemDiffOf(tt.prev.Slice(), next.Slice())
			if !ok || !slices.Equal(got.added, want.added) || !maps.Equal(got.gone, want.gone) {
				t.Errorf("diffItems: gone %v added %v, want gone %v added %v",
					goneIDs(got), idsOf(got.added), goneIDs(want), idsOf(want.added))
			}
		})
	}
}

func goneIDs(d itemDiff) []string {
	return slices.Sorted(func(yield func(string) bool) {
		for it := range d.gone {
			if !yield(it.ID) {
				return
			}
		}
	})
}

// BenchmarkDeriveViewsRefused is what a catalog after a full rebuild (every item new)
// pays to learn that its views cannot be derived from the last catalog's, before it
// builds them, at 1k, 10k and 50k items.
func BenchmarkDeriveViewsRefused(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1000, 10_000, 50_000} {
		prev, next := make([]*Item, n), make([]*Item, n)
		for i := range n {
			prev[i] = deriveItem(r, fmt.Sprintf("p%05d", i))
			c := *prev[i]
			next[i] = &c
		}
		pl, pv, nl := plist.Of(prev), buildViews(prev), plist.Of(next)
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			for b.Loop() {
				if deriveViews(pl, pv, nl) != nil {
					b.Fatal("every item new, and the views were derived")
				}
			}
		})
	}
}

// TestDiffItemsStopsPastLimit: two catalogues whose items all differ are compared only
// until more than limit differ, and the diff says it is incomplete.
func TestDiffItemsStopsPastLimit(t *testing.T) {
	prev, next := make([]*Item, 1000), make([]*Item, 1000)
	for i := range prev {
		prev[i], next[i] = &Item{ID: fmt.Sprintf("p%04d", i)}, &Item{ID: fmt.Sprintf("p%04d", i)}
	}
	d, ok := diffItems(plist.Of(prev), plist.Of(next), 5)
	if ok || len(d.gone) != 6 || len(d.added) != 6 {
		t.Errorf("diffItems(limit 5) of 1000 replaced items = %d gone, %d added, complete %v; want 6, 6, false", len(d.gone), len(d.added), ok)
	}
	if _, ok := diffItems(plist.Of(prev), plist.Of(next), 1000); !ok {
		t.Error("diffItems(limit 1000) of 1000 replaced items is incomplete")
	}
}

// BenchmarkDeriveViewsOneChanged is what the first page view after a publish pays: the
// views of a catalog one item away from the last (its basis, views computed), derived, at
// 1k, 10k and 50k items. (BenchmarkViews' one-changed case makes catalogs with no basis,
// so it builds them.)
func BenchmarkDeriveViewsOneChanged(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1000, 10_000, 50_000} {
		items := make([]*Item, n)
		for i := range n {
			items[i] = deriveItem(r, fmt.Sprintf("p%05d", i))
		}
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			cur := NewCatalog(items)
			cur.Views()
			for i := 0; b.Loop(); i++ {
				k := (i * 7919) % n
				c := *cur.items.At(k)
				c.Downloads += 7
				next := &Catalog{items: cur.items.Set(k, &c), byFile: cur.byFile}
				next.views.basis.Store(viewsBasis(cur))
				next.Views()
				cur = next
			}
		})
	}
}

// TestDerivePublishersReplaced: a publish that replaces a publisher's package with one of
// another author or repository changes the publisher's authors and repositories as a
// build does; one that changes neither keeps them.
func TestDerivePublishersReplaced(t *testing.T) {
	item := func(id, repo, author string) *Item {
		return &Item{ID: id, Kind: "plugin", Card: &store.Card{Author: author},
			Entry: &index.Entry{ID: id, Repo: repo, Kind: "plugin", Owners: []string{"pub0"}}}
	}
	var prev []*Item
	for i := range 40 {
		prev = append(prev, item(fmt.Sprintf("p%03d", i), fmt.Sprintf("org/r%03d", i), "Ann"))
	}
	for _, tt := range []struct{ name, repo, author string }{
		{"same repository and author", "org/r007", "Ann"},
		{"another author", "org/r007", "Bob"},
		{"another repository", "org/other", "Ann"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pl := plist.Of(prev)
			next := pl.Set(7, item("p007", tt.repo, tt.author))
			dv := deriveViews(pl, buildViews(prev), next)
			if dv == nil {
				t.Fatal("one item replaced, and the views were not derived")
			}
			if diff := cmp.Diff(viewsDump(buildViews(next.Slice())), viewsDump(dv)); diff != "" {
				t.Errorf("derived views differ from built ones (-built +derived):\n%s", diff)
			}
		})
	}
}

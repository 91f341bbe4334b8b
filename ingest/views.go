package ingest

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Listing sorts: what Views.List accepts (SortRelevance without a text query is by name,
// as the search table orders it).
const (
	SortRelevance = "relevance"
	SortName      = "name"
	SortRecent    = "recent"
	SortDownloads = "downloads"
)

// Views are the listings and aggregates pages show without a text query, computed once
// per catalog from its Items: every order of every (kind, category) filter, category
// counts per kind, the featured items and each publisher's items. A page then slices
// what it shows instead of filtering, counting and sorting the catalogue per request.
type Views struct {
	lists      map[viewKey]*viewOrders
	counts     map[string]map[string]int // kind ("" = every kind) → category → packages
	featured   map[string][]*Item        // kind ("" = every kind) → featured items, by id
	publishers map[string]*PublisherView
}

// PublisherView is what one publisher (a curated owner) maintains.
type PublisherView struct {
	Items   []*Item  // by id
	Repos   []string // curated repositories, first appearance first
	Authors []string // manifest authors other than the publisher's name, case-insensitively distinct

	hasRepo map[string]bool // Repos as a set: each package has a repository of its own, so a scan of Repos per item was quadratic
}

type viewKey struct{ kind, category string }

// viewOrders are one filter's items in each order.
type viewOrders struct{ name, downloads, recent []*Item }

// viewsOnce memoizes a catalog's Views: a catalog never changes once built. basis is
// the catalog in force before it whose views were computed, if any: usually the same items
// but a few, so this catalog's views derive from its views. It is dropped once used, so a
// catalog holds at most one older catalog and only until its own views are computed.
type viewsOnce struct {
	once  sync.Once
	v     *Views
	ready atomic.Bool // v is computed
	basis atomic.Pointer[Catalog]
}

// Views returns the catalog's listings and aggregates, computing them on first use:
// derived from its basis's when few items differ (an incremental publish changes one),
// else built.
func (c *Catalog) Views() *Views {
	c.views.once.Do(func() {
		var v *Views
		if b := c.views.basis.Swap(nil); b != nil {
			v = deriveViews(b.items, b.views.v, c.items)
		}
		if v == nil {
			v = buildViews(c.Items())
		}
		c.views.v = v
		c.views.ready.Store(true)
	})
	return c.views.v
}

// viewsBasis is what a catalog following prev derives its views from: prev when its views
// are computed, else prev's own basis (whose are), else nil.
func viewsBasis(prev *Catalog) *Catalog {
	if prev == nil || prev.views.ready.Load() {
		return prev
	}
	return prev.views.basis.Load()
}

// List returns items limit..offset+limit of the packages of kind ("" = every kind) in
// category ("" = every category) in the given sort, and how many there are in all.
func (v *Views) List(kind, category, sort string, offset, limit int) ([]*Item, int) {
	o := v.lists[viewKey{kind, category}]
	if o == nil {
		return nil, 0
	}
	all := o.name
	switch sort {
	case SortDownloads:
		all = o.downloads
	case SortRecent:
		all = o.recent
	}
	return window(all, offset, limit), len(all)
}

// window is s[offset:offset+limit], clipped to s.
func window(s []*Item, offset, limit int) []*Item {
	if offset < 0 || limit <= 0 || offset >= len(s) {
		return nil
	}
	return s[offset:min(len(s), offset+limit)]
}

// CategoryCounts maps each category to how many packages of kind ("" = every kind) it
// lists. The map is shared: callers must not change it.
func (v *Views) CategoryCounts(kind string) map[string]int { return v.counts[kind] }

// Featured are the featured packages of kind ("" = every kind), by id.
func (v *Views) Featured(kind string) []*Item { return v.featured[kind] }

// Publisher is what the curated owner name maintains (nil when nothing listed).
func (v *Views) Publisher(name string) *PublisherView { return v.publishers[name] }

func buildViews(items []*Item) *Views {
	v := &Views{lists: map[viewKey]*viewOrders{}, counts: map[string]map[string]int{},
		featured: map[string][]*Item{}, publishers: map[string]*PublisherView{}}
	keys := make([][]*viewOrders, len(items)) // per item, the filters that list it
	for i, it := range items {
		keys[i] = v.ordersOf(itemKeys(it))
		v.count(it)
		if it.Featured() {
			v.featured[""] = append(v.featured[""], it)
			v.featured[it.Kind] = append(v.featured[it.Kind], it)
		}
		v.addPublisher(it)
	}
	for _, order := range sortedOrders(items) {
		for _, i := range order.perm {
			for _, o := range keys[i] {
				*order.field(o) = append(*order.field(o), items[i])
			}
		}
	}
	return v
}

// ordersOf are the viewOrders of keys, created on first use.
func (v *Views) ordersOf(keys []viewKey) []*viewOrders {
	out := make([]*viewOrders, len(keys))
	for j, k := range keys {
		o := v.lists[k]
		if o == nil {
			o = &viewOrders{}
			v.lists[k] = o
		}
		out[j] = o
	}
	return out
}

// itemKeys are the filters that list it: every kind and its own, each with every category
// and each of its categories (once each, as the search filter counts them).
func itemKeys(it *Item) []viewKey {
	cats := []string{""}
	for _, c := range it.Categories() {
		if !slices.Contains(cats, c) {
			cats = append(cats, c)
		}
	}
	keys := make([]viewKey, 0, 2*len(cats))
	for _, c := range cats {
		keys = append(keys, viewKey{"", c}, viewKey{it.Kind, c})
	}
	return keys
}

func (v *Views) count(it *Item) {
	for _, kind := range []string{"", it.Kind} {
		if v.counts[kind] == nil {
			v.counts[kind] = map[string]int{}
		}
		for _, c := range distinct(it.Categories()) {
			v.counts[kind][c]++
		}
	}
}

// distinct is cats without repeats (a package counts once per category, however often
// it names it), in order.
func distinct(cats []string) []string {
	for i, c := range cats {
		if slices.Contains(cats[:i], c) { // rare: copy without the repeats
			out := slices.Clone(cats[:i])
			for _, c := range cats[i+1:] {
				if !slices.Contains(out, c) {
					out = append(out, c)
				}
			}
			return out
		}
	}
	return cats
}

func (v *Views) addPublisher(it *Item) {
	owners, _ := it.owners()
	for _, name := range owners {
		v.addPublisherAs(name, it)
	}
}

// addPublisherAs adds it to the items of publisher name, with its repository and author.
func (v *Views) addPublisherAs(name string, it *Item) {
	_, repo := it.owners()
	p := v.publishers[name]
	if p == nil {
		p = &PublisherView{hasRepo: map[string]bool{}}
		v.publishers[name] = p
	}
	p.Items = append(p.Items, it)
	if !p.hasRepo[repo] {
		p.hasRepo[repo] = true
		p.Repos = append(p.Repos, repo)
	}
	a := it.Author()
	if a != "" && !strings.EqualFold(a, name) && !slices.ContainsFunc(p.Authors, func(b string) bool { return strings.EqualFold(a, b) }) {
		p.Authors = append(p.Authors, a)
	}
}

// owners are the curated owners and repository of it.
func (it *Item) owners() ([]string, string) {
	switch {
	case it.Entry != nil:
		return it.Entry.Owners, it.Entry.Repo
	case it.ExtEntry != nil:
		return it.ExtEntry.Owners, it.ExtEntry.Repo
	}
	return nil, ""
}

// sortedOrder is the catalogue in one order (a permutation of the item indexes) and the
// field of viewOrders that holds it.
type sortedOrder struct {
	perm  []int32
	field func(*viewOrders) *[]*Item
}

// sortedOrders sorts items once per order, as the search table sorts them: active before
// archived (archive.go), then by lower-case name, by downloads (most first) and by update
// time (newest first), ties by id (items are sorted by id, so by index).
func sortedOrders(items []*Item) []sortedOrder {
	lower := make([]string, len(items))
	for i, it := range items {
		lower[i] = strings.ToLower(it.Name())
	}
	perm := func(cmpf func(a, b int32) int) []int32 {
		p := make([]int32, len(items))
		for i := range p {
			p[i] = int32(i)
		}
		slices.SortFunc(p, func(a, b int32) int { return cmp.Or(archivedLast(items[a], items[b]), cmpf(a, b), cmp.Compare(a, b)) })
		return p
	}
	return []sortedOrder{
		{perm(func(a, b int32) int { return strings.Compare(lower[a], lower[b]) }), func(o *viewOrders) *[]*Item { return &o.name }},
		{perm(func(a, b int32) int { return cmp.Compare(items[b].Downloads, items[a].Downloads) }), func(o *viewOrders) *[]*Item { return &o.downloads }},
		{perm(func(a, b int32) int { return items[b].UpdatedAt.Compare(items[a].UpdatedAt) }), func(o *viewOrders) *[]*Item { return &o.recent }},
	}
}

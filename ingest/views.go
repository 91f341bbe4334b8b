package ingest

import (
	"cmp"
	"slices"
	"strings"
	"sync"
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
}

type viewKey struct{ kind, category string }

// viewOrders are one filter's items in each order.
type viewOrders struct{ name, downloads, recent []*Item }

// viewsOnce memoizes a catalog's Views: a catalog never changes once built.
type viewsOnce struct {
	once sync.Once
	v    *Views
}

// Views returns the catalog's listings and aggregates, computing them on first use.
func (c *Catalog) Views() *Views {
	c.views.once.Do(func() { c.views.v = buildViews(c.Items) })
	return c.views.v
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
	v := &Views{lists: map[viewKey]*viewOrders{}, counts: map[string]map[string]int{"": {}},
		featured: map[string][]*Item{}, publishers: map[string]*PublisherView{}}
	keys := make(map[*Item][]viewKey, len(items))
	for _, it := range items {
		keys[it] = itemKeys(it)
		v.count(it)
		if it.Featured() {
			v.featured[""] = append(v.featured[""], it)
			v.featured[it.Kind] = append(v.featured[it.Kind], it)
		}
		v.addPublisher(it)
	}
	for _, order := range sortedOrders(items) {
		for _, it := range order.items {
			for _, k := range keys[it] {
				o := v.lists[k]
				if o == nil {
					o = &viewOrders{}
					v.lists[k] = o
				}
				*order.field(o) = append(*order.field(o), it)
			}
		}
	}
	return v
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
	if v.counts[it.Kind] == nil {
		v.counts[it.Kind] = map[string]int{}
	}
	seen := []string{}
	for _, c := range it.Categories() {
		if !slices.Contains(seen, c) {
			seen = append(seen, c)
			v.counts[""][c]++
			v.counts[it.Kind][c]++
		}
	}
}

func (v *Views) addPublisher(it *Item) {
	owners, repo := it.owners()
	if len(owners) == 0 {
		return
	}
	for _, name := range owners {
		p := v.publishers[name]
		if p == nil {
			p = &PublisherView{}
			v.publishers[name] = p
		}
		p.Items = append(p.Items, it)
		if !slices.Contains(p.Repos, repo) {
			p.Repos = append(p.Repos, repo)
		}
		a := it.Author()
		if a != "" && !strings.EqualFold(a, name) && !slices.ContainsFunc(p.Authors, func(b string) bool { return strings.EqualFold(a, b) }) {
			p.Authors = append(p.Authors, a)
		}
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

// sortedOrder is the catalogue in one order and the field of viewOrders that holds it.
type sortedOrder struct {
	items []*Item
	field func(*viewOrders) *[]*Item
}

// sortedOrders sorts items once per order, as the search table sorts them: by lower-case
// name, by downloads (most first) and by update time (newest first), ties by id.
func sortedOrders(items []*Item) []sortedOrder {
	lower := make(map[*Item]string, len(items))
	for _, it := range items {
		lower[it] = strings.ToLower(it.Name())
	}
	byName := slices.Clone(items)
	slices.SortFunc(byName, func(a, b *Item) int { return cmp.Or(strings.Compare(lower[a], lower[b]), strings.Compare(a.ID, b.ID)) })
	byDownloads := slices.Clone(items)
	slices.SortFunc(byDownloads, func(a, b *Item) int {
		return cmp.Or(cmp.Compare(b.Downloads, a.Downloads), strings.Compare(a.ID, b.ID))
	})
	byRecent := slices.Clone(items)
	slices.SortFunc(byRecent, func(a, b *Item) int { return cmp.Or(b.UpdatedAt.Compare(a.UpdatedAt), strings.Compare(a.ID, b.ID)) })
	return []sortedOrder{
		{byName, func(o *viewOrders) *[]*Item { return &o.name }},
		{byDownloads, func(o *viewOrders) *[]*Item { return &o.downloads }},
		{byRecent, func(o *viewOrders) *[]*Item { return &o.recent }},
	}
}

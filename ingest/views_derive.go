package ingest

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/pluginyard/registry/plist"
)

// maxDerived is the share of a catalogue past which changed items are built anew rather
// than merged into the previous views.
const maxDerived = 8 // one item in 8

// itemDiff is what differs between two catalogues sorted by id: the items of the old one
// that are gone or replaced, and those of the new one that are new or replacements. An
// item is the same when it is the same *Item: a catalog never changes an item in place.
type itemDiff struct {
	gone  map[*Item]bool
	added []*Item
}

// diffItems is what differs between prev and next, or false once more than limit items are
// gone or added (the walk stops there: after a full rebuild every item differs).
//
// The two lists share most of their chunks (plist): where both walks stand at the start of
// a chunk they share, the chunk is skipped whole, so a publish's catalogue is compared with
// the last in the chunks that changed, not item by item.
func diffItems(prev, next plist.List[*Item], limit int) (itemDiff, bool) {
	d := itemDiff{gone: map[*Item]bool{}}
	pc, nc := prev.Chunks(), next.Chunks()
	var a, b []*Item // what is left of the current chunk of each
	i, j := 0, 0     // the next chunk of each
	for {
		for len(a) == 0 && len(b) == 0 && i < len(pc) && j < len(nc) && sameChunk(pc[i], nc[j]) {
			i, j = i+1, j+1
		}
		if len(a) == 0 && i < len(pc) {
			a, i = pc[i], i+1
		}
		if len(b) == 0 && j < len(nc) {
			b, j = nc[j], j+1
		}
		switch {
		case len(d.gone) > limit || len(d.added) > limit:
			return d, false
		case len(a) == 0 && len(b) == 0:
			return d, true
		case len(b) == 0 || (len(a) > 0 && a[0].ID < b[0].ID):
			d.gone[a[0]] = true
			a = a[1:]
		case len(a) == 0 || b[0].ID < a[0].ID:
			d.added = append(d.added, b[0])
			b = b[1:]
		default:
			if a[0] != b[0] {
				d.gone[a[0]] = true
				d.added = append(d.added, b[0])
			}
			a, b = a[1:], b[1:]
		}
	}
}

// sameChunk reports whether x and y are the same chunk (not only equal items).
func sameChunk(x, y []*Item) bool { return len(x) == len(y) && len(x) > 0 && &x[0] == &y[0] }

// deriveViews are the views of next computed from prev, the views of prevItems: the lists
// an item gone or added is in drop and take it in place (binary searches and copies, no
// sort); the others are shared; counts, featured and publishers, which need no sort, are
// counted again. nil when too much differs.
func deriveViews(prevItems plist.List[*Item], prev *Views, next plist.List[*Item]) *Views {
	d, ok := diffItems(prevItems, next, next.Len()/maxDerived+1)
	if !ok {
		return nil
	}
	v := &Views{lists: make(map[viewKey]*viewOrders, len(prev.lists)), counts: map[string]map[string]int{},
		featured: map[string][]*Item{}, publishers: maps.Clone(prev.publishers)}
	v.deriveCounts(prev, d)
	v.deriveFeatured(prev, d)
	v.derivePublishers(d)
	addedBy, goneBy := map[viewKey][]*Item{}, map[viewKey][]*Item{}
	for _, it := range d.added {
		for _, k := range itemKeys(it) {
			addedBy[k] = append(addedBy[k], it)
		}
	}
	for it := range d.gone {
		for _, k := range itemKeys(it) {
			goneBy[k] = append(goneBy[k], it)
		}
	}
	maps.Copy(v.lists, prev.lists)
	for _, k := range slices.Concat(slices.Collect(maps.Keys(addedBy)), slices.Collect(maps.Keys(goneBy))) {
		o := prev.lists[k]
		if o == nil {
			o = &viewOrders{}
		}
		n, ok := derivedOrders(o, addedBy[k], goneBy[k])
		switch {
		case !ok:
			return nil // a list did not hold what it should: build anew
		case len(n.name) == 0:
			delete(v.lists, k)
		default:
			v.lists[k] = n
		}
	}
	return v
}

// deriveCounts are prev's counts less the items gone plus those added.
func (v *Views) deriveCounts(prev *Views, d itemDiff) {
	for kind, m := range prev.counts {
		v.counts[kind] = maps.Clone(m)
	}
	for it := range d.gone {
		for _, c := range distinct(it.Categories()) {
			for _, kind := range []string{"", it.Kind} {
				if v.counts[kind][c]--; v.counts[kind][c] == 0 {
					delete(v.counts[kind], c)
				}
			}
		}
	}
	for _, it := range d.added {
		v.count(it)
	}
}

// deriveFeatured is prev's featured items less those gone, plus the featured added, by id.
func (v *Views) deriveFeatured(prev *Views, d itemDiff) {
	for kind, items := range prev.featured {
		v.featured[kind] = slices.DeleteFunc(slices.Clone(items), func(it *Item) bool { return d.gone[it] })
	}
	for _, it := range d.added {
		if it.Featured() {
			for _, kind := range []string{"", it.Kind} {
				v.featured[kind] = insertByID(v.featured[kind], it)
			}
		}
	}
	for kind, items := range v.featured {
		if len(items) == 0 {
			delete(v.featured, kind)
		}
	}
}

// derivePublishers recomputes the publishers an item gone or added belongs to (their
// items less those gone, plus those added, by id); the others are shared with prev.
func (v *Views) derivePublishers(d itemDiff) {
	touched := map[string][]*Item{}
	for it := range d.gone {
		owners, _ := it.owners()
		for _, name := range owners {
			touched[name] = nil
		}
	}
	for _, it := range d.added {
		owners, _ := it.owners()
		for _, name := range owners {
			touched[name] = append(touched[name], it)
		}
	}
	for name, added := range touched {
		if p := v.publishers[name]; p != nil {
			if items, ok := replacedAlike(name, p.Items, added, d); ok {
				v.publishers[name] = &PublisherView{Items: items, Repos: p.Repos, Authors: p.Authors, hasRepo: p.hasRepo}
				continue
			}
		}
		var items []*Item
		if p := v.publishers[name]; p != nil {
			items = slices.DeleteFunc(slices.Clone(p.Items), func(it *Item) bool { return d.gone[it] })
		}
		for _, it := range added {
			items = insertByID(items, it)
		}
		delete(v.publishers, name)
		for _, it := range items {
			v.addPublisherAs(name, it)
		}
	}
}

// replacedAlike is items with each of added in the place of the gone item of its id, when
// every item of items gone is so replaced by one of the same repository and author (a
// publish): the publisher's repositories and authors, in order, are then those it had. A
// publisher of thousands of packages is not rebuilt item by item per publish.
func replacedAlike(name string, items, added []*Item, d itemDiff) ([]*Item, bool) {
	out := slices.Clone(items)
	for _, a := range added {
		i, found := slices.BinarySearchFunc(out, a.ID, func(it *Item, id string) int { return strings.Compare(it.ID, id) })
		if !found || !d.gone[out[i]] || out[i].Author() != a.Author() || repoOf(out[i]) != repoOf(a) {
			return nil, false
		}
		out[i] = a
	}
	gone := 0
	for it := range d.gone {
		if owners, _ := it.owners(); slices.Contains(owners, name) {
			gone++
		}
	}
	return out, gone == len(added)
}

// repoOf is it's curated repository.
func repoOf(it *Item) string {
	_, repo := it.owners()
	return repo
}

// insertByID inserts it into items, sorted by id.
func insertByID(items []*Item, it *Item) []*Item {
	i, _ := slices.BinarySearchFunc(items, it.ID, func(a *Item, id string) int { return strings.Compare(a.ID, id) })
	return slices.Insert(items, i, it)
}

// derivedOrders are o without gone and with added, in each order (ok false when an item
// gone is not where its order puts it).
func derivedOrders(o *viewOrders, added, gone []*Item) (*viewOrders, bool) {
	n := &viewOrders{}
	var ok1, ok2, ok3 bool
	n.name, ok1 = mergeOrder(o.name, added, gone, byName)
	n.downloads, ok2 = mergeOrder(o.downloads, added, gone, byDownloads)
	n.recent, ok3 = mergeOrder(o.recent, added, gone, byRecent)
	return n, ok1 && ok2 && ok3
}

// mergeOrder is list (sorted by order) without gone and with added, found by binary
// search and copied around in segments.
func mergeOrder(list, added, gone []*Item, order func(a, b *Item) int) ([]*Item, bool) {
	drops := make([]int, 0, len(gone))
	for _, g := range gone {
		i, found := slices.BinarySearchFunc(list, g, order)
		if !found || list[i] != g {
			return nil, false
		}
		drops = append(drops, i)
	}
	slices.Sort(drops)
	added = slices.Clone(added)
	slices.SortFunc(added, order)
	ins := make([]int, len(added))
	for i, a := range added {
		ins[i], _ = slices.BinarySearchFunc(list, a, order)
	}
	out := make([]*Item, 0, len(list)+len(added)-len(drops))
	start, ai, di := 0, 0, 0
	for {
		next := len(list)
		if ai < len(ins) {
			next = min(next, ins[ai])
		}
		if di < len(drops) {
			next = min(next, drops[di])
		}
		out = append(out, list[start:next]...)
		for ai < len(ins) && ins[ai] == next {
			out = append(out, added[ai])
			ai++
		}
		start = next
		if di < len(drops) && drops[di] == next {
			di++
			start = next + 1
		}
		if next == len(list) {
			return out, true
		}
	}
}

// The orders of the views, ties by id: as sortedOrders sorts (items there are by id).
func byName(a, b *Item) int {
	return cmp.Or(archivedLast(a, b), strings.Compare(strings.ToLower(a.Name()), strings.ToLower(b.Name())), strings.Compare(a.ID, b.ID))
}

func byDownloads(a, b *Item) int {
	return cmp.Or(archivedLast(a, b), cmp.Compare(b.Downloads, a.Downloads), strings.Compare(a.ID, b.ID))
}

func byRecent(a, b *Item) int {
	return cmp.Or(archivedLast(a, b), b.UpdatedAt.Compare(a.UpdatedAt), strings.Compare(a.ID, b.ID))
}

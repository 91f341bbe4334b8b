package index

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pluginyard/registry/plist"
)

// Set is the entries of one document kind, sorted by id and, on demand, by rank. Put and
// Remove keep both orders by one binary search and one copy each, so that a change of one
// entry costs no sort. A Set is not safe for concurrent use.
type Set struct {
	order  string
	byID   []*Encoded
	byRank []*Encoded // valid when ranked
	ranked bool
	// cats are the entries of each shardable category, by id and by rank, once PlanShards
	// asked; dirty names the categories changed since the last PlanShards.
	cats  map[string]*catList
	dirty map[string]bool
	kept  *kept // the last index.json FitKandev built (policy.go)
	// put and gone are the entries put and removed since the last FitKandev, for its kept
	// blocks, while it keeps any; lost when they grew past what is worth applying one by one.
	put, gone []*Encoded
	lost      bool
	lens      []int // len(Full) of byID's entries, in order: shard sizes without reading each entry
	// cum are the running sums of lens plus a comma each (cum[i]: before entry i), valid up
	// to cum[cumOK]; full and compact are the total lengths of the entries' two forms.
	cum           []int
	cumOK         int
	full, compact int
}

// catList is one category's entries, by id and by rank, in persistent lists: a category
// shard's plan takes them as they are (no copy), and a change copies one chunk of each.
type catList struct {
	byID, byRank plist.List[*Encoded]
}

// idIn finds id in a list sorted by id.
func idIn(l plist.List[*Encoded], id string) (int, bool) {
	return l.Search(func(x *Encoded) int { return entryID(x, id) })
}

// rankIn finds e's place in a list sorted by cmpf.
func rankIn(l plist.List[*Encoded], e *Encoded, cmpf func(a, b *Encoded) int) (int, bool) {
	return l.Search(func(x *Encoded) int { return cmpf(x, e) })
}

// NewSet returns a Set of entries ranked by order (OrderDownloads or OrderRecent); an id
// that appears twice is an error.
func NewSet(order string, entries []*Encoded) (*Set, error) {
	s := &Set{order: order, byID: slices.Clone(entries)}
	slices.SortFunc(s.byID, func(a, b *Encoded) int { return strings.Compare(a.ID, b.ID) })
	s.lens = make([]int, len(s.byID))
	for i, e := range s.byID {
		s.lens[i] = len(e.Full)
		s.full, s.compact = s.full+len(e.Full), s.compact+len(e.Compact)
	}
	s.cum = make([]int, len(s.byID)+1)
	for i := 1; i < len(s.byID); i++ {
		if s.byID[i].ID == s.byID[i-1].ID {
			return nil, fmt.Errorf("id %q appears twice", s.byID[i].ID)
		}
	}
	return s, nil
}

// Len is the number of entries.
func (s *Set) Len() int { return len(s.byID) }

// ByID returns the entries sorted by id (shared: do not modify).
func (s *Set) ByID() []*Encoded { return s.byID }

// ByRank returns the entries by rank (official, featured, then the order, then id).
func (s *Set) ByRank() []*Encoded {
	if !s.ranked {
		s.byRank = slices.Clone(s.byID)
		slices.SortFunc(s.byRank, rankCompare(s.order))
		s.ranked = true
	}
	return s.byRank
}

// Get returns the entry with id.
func (s *Set) Get(id string) (*Encoded, bool) {
	i, ok := s.find(id)
	if !ok {
		return nil, false
	}
	return s.byID[i], true
}

func (s *Set) find(id string) (int, bool) {
	return slices.BinarySearchFunc(s.byID, id, entryID)
}

// Put adds e, or replaces the entry with its id; it returns the entry replaced (nil if none).
func (s *Set) Put(e *Encoded) *Encoded {
	i, ok := s.find(e.ID)
	var old *Encoded
	if ok {
		old = s.byID[i]
		s.byID[i], s.lens[i] = e, len(e.Full)
		s.full, s.compact = s.full-len(old.Full), s.compact-len(old.Compact)
	} else {
		s.byID = slices.Insert(s.byID, i, e)
		s.lens = slices.Insert(s.lens, i, len(e.Full))
		s.cum = append(s.cum, 0)
	}
	s.full, s.compact = s.full+len(e.Full), s.compact+len(e.Compact)
	s.cumOK = min(s.cumOK, i)
	s.logChange(old, e)
	cmpf := rankCompare(s.order)
	if s.ranked && (old == nil || !replaceSorted(s.byRank, old, e, cmpf)) {
		if old != nil {
			s.removeRanked(old)
		}
		j, _ := slices.BinarySearchFunc(s.byRank, e, cmpf)
		s.byRank = slices.Insert(s.byRank, j, e)
	}
	if s.cats != nil {
		if old != nil && slices.Equal(categoriesOf(old), categoriesOf(e)) && s.recategorize(old, e) {
			return old
		}
		if old != nil {
			s.uncategorize(old)
		}
		s.categorize(e)
	}
	return old
}

// recategorize puts e in place of old (the same id and categories) in its categories'
// lists (a new chunk of each); false (nothing changed) when a list does not hold old where
// its keys say.
func (s *Set) recategorize(old, e *Encoded) bool {
	cmpf := rankCompare(s.order)
	cs := categoriesOf(e)
	for _, c := range cs {
		cl := s.cats[c]
		if cl == nil {
			return false
		}
		if i, ok := idIn(cl.byID, old.ID); !ok || cl.byID.At(i) != old {
			return false
		}
		if j, ok := rankIn(cl.byRank, old, cmpf); !ok || cl.byRank.At(j) != old {
			return false
		}
	}
	for _, c := range cs {
		cl := s.cats[c]
		i, _ := idIn(cl.byID, old.ID)
		cl.byID = cl.byID.Set(i, e)
		j, _ := rankIn(cl.byRank, old, cmpf)
		cl.byRank = cl.byRank.Delete(j)
		k, _ := rankIn(cl.byRank, e, cmpf)
		cl.byRank = cl.byRank.Insert(k, e)
		s.dirty[c] = true
	}
	return true
}

// replaceSorted puts e in place of old in list (sorted by cmpf), moving only the entries
// between old's place and e's; false (list unchanged) when old is not where its key says.
func replaceSorted(list []*Encoded, old, e *Encoded, cmpf func(a, b *Encoded) int) bool {
	i, ok := slices.BinarySearchFunc(list, old, cmpf)
	if !ok || list[i] != old {
		return false
	}
	j, _ := slices.BinarySearchFunc(list, e, cmpf) // where e goes with old still in place
	switch {
	case j <= i:
		copy(list[j+1:i+1], list[j:i])
	default:
		j--
		copy(list[i:j], list[i+1:j+1])
	}
	list[j] = e
	return true
}

// categorize adds e to its categories' lists (both orders) and marks them changed.
func (s *Set) categorize(e *Encoded) {
	cmpf := rankCompare(s.order)
	for _, c := range categoriesOf(e) {
		cl := s.cats[c]
		if cl == nil {
			cl = &catList{}
			s.cats[c] = cl
		}
		i, _ := idIn(cl.byID, e.ID)
		cl.byID = cl.byID.Insert(i, e)
		j, _ := rankIn(cl.byRank, e, cmpf)
		cl.byRank = cl.byRank.Insert(j, e)
		s.dirty[c] = true
	}
}

// uncategorize removes old from its categories' lists and marks them changed.
func (s *Set) uncategorize(old *Encoded) {
	cmpf := rankCompare(s.order)
	for _, c := range categoriesOf(old) {
		cl := s.cats[c]
		if cl == nil {
			continue
		}
		if i, ok := idIn(cl.byID, old.ID); ok && cl.byID.At(i) == old {
			cl.byID = cl.byID.Delete(i)
		}
		if j, ok := rankIn(cl.byRank, old, cmpf); ok && cl.byRank.At(j) == old {
			cl.byRank = cl.byRank.Delete(j)
		}
		if cl.byID.Len() == 0 {
			delete(s.cats, c)
		}
		s.dirty[c] = true
	}
}

// categories returns the category lists, made on first use.
func (s *Set) categories() map[string]*catList {
	if s.cats == nil {
		byRank, byID := map[string][]*Encoded{}, map[string][]*Encoded{}
		for _, e := range s.ByRank() {
			for _, c := range categoriesOf(e) {
				byRank[c] = append(byRank[c], e)
			}
		}
		for _, e := range s.byID {
			for _, c := range categoriesOf(e) {
				byID[c] = append(byID[c], e)
			}
		}
		s.cats, s.dirty = map[string]*catList{}, map[string]bool{}
		for c := range byID {
			s.cats[c] = &catList{byID: plist.Of(byID[c]), byRank: plist.Of(byRank[c])}
			s.dirty[c] = true
		}
	}
	return s.cats
}

// runningSums brings cum up to date from the first entry changed since it was last.
func (s *Set) runningSums() []int {
	for i := s.cumOK; i < len(s.lens); i++ {
		s.cum[i+1] = s.cum[i] + s.lens[i] + 1
	}
	s.cumOK = len(s.lens)
	return s.cum
}

// Remove drops the entry with id and returns it (nil if none).
func (s *Set) Remove(id string) *Encoded {
	i, ok := s.find(id)
	if !ok {
		return nil
	}
	old := s.byID[i]
	s.byID = slices.Delete(s.byID, i, i+1)
	s.lens = slices.Delete(s.lens, i, i+1)
	s.cum = s.cum[:len(s.cum)-1]
	s.cumOK = min(s.cumOK, i)
	s.full, s.compact = s.full-len(old.Full), s.compact-len(old.Compact)
	s.logChange(old, nil)
	if s.ranked {
		s.removeRanked(old)
	}
	if s.cats != nil {
		s.uncategorize(old)
	}
	return old
}

// logChange records that old (nil: none) left the set and e (nil: none) joined it, while
// FitKandev keeps a document's blocks.
func (s *Set) logChange(old, e *Encoded) {
	if s.kept == nil || s.kept.mode == "" || s.lost {
		return
	}
	if old != nil {
		s.gone = append(s.gone, old)
	}
	if e != nil {
		s.put = append(s.put, e)
	}
	if len(s.put)+len(s.gone) > max(64, len(s.byID)/8) {
		s.put, s.gone, s.lost = nil, nil, true
	}
}

// takeChanges returns the net changes logged since the last call (an entry put and then
// removed again is in neither list) and clears the log; false when the log was lost (or
// never kept).
func (s *Set) takeChanges() (removed, added []*Encoded, ok bool) {
	put, gone, lost := s.put, s.gone, s.lost
	s.put, s.gone, s.lost = nil, nil, false
	if lost || s.kept == nil || s.kept.mode == "" {
		return nil, nil, false
	}
	if len(put) == 0 || len(gone) == 0 {
		return gone, put, true
	}
	net := make(map[*Encoded]int, len(put)+len(gone))
	for _, e := range put {
		net[e]++
	}
	for _, e := range gone {
		net[e]--
	}
	for _, e := range gone {
		if net[e] < 0 {
			removed = append(removed, e)
			net[e] = 0
		}
	}
	for _, e := range put {
		if net[e] > 0 {
			added = append(added, e)
			net[e] = 0
		}
	}
	return removed, added, true
}

func (s *Set) removeRanked(old *Encoded) {
	j, ok := slices.BinarySearchFunc(s.byRank, old, rankCompare(s.order))
	if ok && s.byRank[j] == old {
		s.byRank = slices.Delete(s.byRank, j, j+1)
		return
	}
	s.ranked = false // not where its key says (cannot happen for immutable entries): re-sort on demand
}

// ShardableCategory reports whether category c has a shard of its own: 1 to 64 of
// [a-z0-9-], starting with a letter or digit (URL-safe), and never "all" (the id shards)
// or "shards" (the shard list).
func ShardableCategory(c string) bool {
	if len(c) == 0 || len(c) > 64 || c[0] == '-' || c == "all" || c == "shards" {
		return false
	}
	for i := 0; i < len(c); i++ {
		if b := c[i]; (b < 'a' || b > 'z') && (b < '0' || b > '9') && b != '-' {
			return false
		}
	}
	return true
}

func isIDShard(name string) bool { return name == "all.json" || strings.HasPrefix(name, "all.") }

// idShardName is the name of the id shard of prefix.
func idShardName(prefix string) string {
	if prefix == "" {
		return "all.json"
	}
	return "all." + prefix + ".json"
}

// ShardPlan is one shard: which entries it holds, built into a document on first use and
// kept (a plan is immutable; an update replaces the plans whose entries changed).
type ShardPlan struct {
	Name    string
	URL     string
	Prefix  string // id shards: the id prefix ("" for all.json)
	Exact   bool   // id shards: holds only the id equal to Prefix (its longer ids are split off)
	Entries int

	category string
	header   Header
	policy   Policy
	entries  []*Encoded // id shards: sorted by id (a copy)
	cat      catList    // category shards: the category's entries, as PlanShards found them
	idURLs   []string   // what a partial category shard names
	once     sync.Once
	doc      Doc
	err      error
}

// GeneratedAt is when the shard's content last changed (its document's generated_at).
func (sp *ShardPlan) GeneratedAt() time.Time { return sp.header.GeneratedAt }

// Doc builds the shard's document (once).
func (sp *ShardPlan) Doc() (Doc, error) {
	sp.once.Do(func() {
		head := kandevHead(sp.header)
		if sp.category == "" { // id shards: full if it fits, else compact (a single entry)
			sp.doc, sp.err = fitDoc(sp.policy, head, sp.entries, sizesOf(sp.entries), func() []*Encoded { return sp.entries }, len(sp.entries), sp.idURLs, nil, nil)
			return
		}
		entries, ranked := sp.cat.byID.Slice(), sp.cat.byRank.Slice()
		sp.doc, sp.err = fitDoc(sp.policy, head, entries, sizesOf(entries), func() []*Encoded { return ranked }, len(entries), sp.idURLs, nil, nil)
	})
	return sp.doc, sp.err
}

// Shards is a set of shard plans: id shards (every entry in exactly one) and one per
// shardable category.
type Shards struct {
	Plans []*ShardPlan // id shards sorted by name, then category shards sorted by name
	byKey map[string]*ShardPlan
}

// Plan returns the shard named name.
func (s *Shards) Plan(name string) (*ShardPlan, bool) {
	if s == nil {
		return nil, false
	}
	p, ok := s.byKey[name]
	return p, ok
}

// URLs returns the id shards' and the category shards' URLs.
func (s *Shards) URLs() (ids, categories []string) {
	ids, categories = []string{}, []string{}
	if s == nil {
		return
	}
	for _, p := range s.Plans {
		if p.category == "" {
			ids = append(ids, p.URL)
		} else {
			categories = append(categories, p.URL)
		}
	}
	return ids, categories
}

// PlanShards lays out the shards of set under p and header h. Plans of prev whose entries
// are the same (the same Encoded values) are kept as they are, with their document if built
// and their own header: a change of one entry rebuilds only the shards that hold it.
func PlanShards(p Policy, h Header, set *Set, prev *Shards) (*Shards, error) {
	out := &Shards{byKey: map[string]*ShardPlan{}}
	var ids []*ShardPlan
	sp := splitter{p: p, h: h, entries: set.ByID(), cum: set.runningSums(), head: len(kandevHead(h)) + len(`]}`), prev: prev}
	if err := sp.split(0, set.Len(), "", false, &ids); err != nil {
		return nil, err
	}
	idURLs := make([]string, len(ids))
	for i, sp := range ids {
		idURLs[i] = sp.URL
	}
	sameURLs := prev != nil && slices.Equal(prev.idURLs(), idURLs)
	for i, sp := range ids {
		if sp.idURLs == nil { // a new plan
			sp.idURLs = idURLs
		} else if !sameURLs { // kept entries, but the partial object it may carry changed
			sp = &ShardPlan{Name: sp.Name, URL: sp.URL, Prefix: sp.Prefix, Exact: sp.Exact, Entries: sp.Entries, header: h,
				policy: p, entries: sp.entries, idURLs: idURLs}
			ids[i] = sp
		}
		out.Plans = append(out.Plans, sp)
		out.byKey[sp.Name] = sp
	}
	for _, sp := range categoryPlans(p, h, set, prev, sameURLs, idURLs) {
		out.Plans = append(out.Plans, sp)
		out.byKey[sp.Name] = sp
	}
	clear(set.dirty)
	return out, nil
}

// ShardListName is the shard list document's name (served beside the shards): every shard
// URL, for a catalogue whose shards are too many to name in each partial object.
const ShardListName = "shards.json"

// List is the shard list document: {"shards": [...], "category_shards": [...]}.
func (s *Shards) List() ([]byte, error) {
	ids, cats := s.URLs()
	b, err := marshal(struct {
		Shards         []string `json:"shards"`
		CategoryShards []string `json:"category_shards"`
	}{ids, cats})
	if err != nil {
		return nil, fmt.Errorf("index: shard list: %w", err)
	}
	return append(b, '\n'), nil
}

func (s *Shards) idURLs() []string {
	var out []string
	for _, p := range s.Plans {
		if p.category == "" {
			out = append(out, p.URL)
		}
	}
	return out
}

// reuse returns prev's id shard named name when it holds exactly entries.
func (s *Shards) reuse(name string, entries []*Encoded) (*ShardPlan, bool) {
	if s == nil {
		return nil, false
	}
	old, ok := s.byKey[name]
	if !ok || old.category != "" || !slices.Equal(old.entries, entries) {
		return nil, false
	}
	return old, true
}

// splitter lays out id shards over entries (sorted by id) with cum, the running sum of
// their full sizes plus a comma each, so that a group's size costs no pass over it.
type splitter struct {
	p       Policy
	h       Header
	entries []*Encoded
	cum     []int
	head    int
	prev    *Shards
}

// split adds the id shards of entries[lo:hi] (all starting with prefix): one shard when
// they fit in full, else the groups of each next id character (found by binary search),
// consecutive groups packed into one shard while they fit together (named by their range of
// characters, "all.{prefix}{first}~{last}.json"; "~" is not an id character) and a group too
// large alone split further; the id equal to prefix (exact) in a shard of its own. Packing
// keeps shards near the limit, so their number grows with the catalogue's bytes over the
// limit, not with the id alphabet.
func (sp *splitter) split(lo, hi int, prefix string, exact bool, out *[]*ShardPlan) error {
	if lo >= hi {
		return nil
	}
	if sp.size(lo, hi) <= sp.p.limit() || hi-lo == 1 {
		sp.add(lo, hi, idShardName(prefix), prefix, exact, out)
		return nil
	}
	i := lo
	if sp.entries[lo].ID == prefix {
		if err := sp.split(lo, lo+1, prefix, true, out); err != nil {
			return err
		}
		i = lo + 1
	}
	k := len(prefix)
	start, first := -1, byte(0) // the pending packed run: entries[start:i], from character first
	flush := func(end int, last byte) {
		if start < 0 {
			return
		}
		name, common := prefix+string(first), prefix+string(first)
		if last != first {
			name, common = name+"~"+string(last), prefix
		}
		sp.add(start, end, idShardName(name), common, false, out)
		start = -1
	}
	var prev byte
	for i < hi {
		c := sp.entries[i].ID[k]
		j := i + sort.Search(hi-i, func(n int) bool { return sp.entries[i+n].ID[k] > c })
		switch {
		case sp.size(i, j) > sp.p.limit(): // too large alone: its own split
			flush(i, prev)
			if err := sp.split(i, j, prefix+string(c), false, out); err != nil {
				return err
			}
		case start >= 0 && sp.size(start, j) <= sp.p.limit(): // joins the run
		default:
			flush(i, prev)
			start, first = i, c
		}
		prev, i = c, j
	}
	flush(hi, prev)
	return nil
}

// size is the bytes of a document holding entries[lo:hi] in full.
func (sp *splitter) size(lo, hi int) int { return sp.head + sp.cum[hi] - sp.cum[lo] - 1 }

// add appends the shard of entries[lo:hi], prev's plan when it holds exactly them.
func (sp *splitter) add(lo, hi int, name, prefix string, exact bool, out *[]*ShardPlan) {
	entries := sp.entries[lo:hi]
	if old, ok := sp.prev.reuse(name, entries); ok {
		*out = append(*out, old)
		return
	}
	*out = append(*out, &ShardPlan{Name: name, URL: sp.p.ShardURL(name), Prefix: prefix, Exact: exact,
		Entries: len(entries), header: sp.h, policy: sp.p, entries: slices.Clone(entries)})
}

// categoryPlans are the category shards of set: prev's plan for a category unchanged
// since the last PlanShards (and naming the same id shards), else a new one.
func categoryPlans(p Policy, h Header, set *Set, prev *Shards, sameURLs bool, idURLs []string) []*ShardPlan {
	cats := set.categories()
	names := make([]string, 0, len(cats))
	for c := range cats {
		names = append(names, c)
	}
	slices.Sort(names)
	plans := make([]*ShardPlan, 0, len(names))
	for _, c := range names {
		if prev != nil && sameURLs && !set.dirty[c] {
			if old, ok := prev.byKey[c+".json"]; ok && old.category == c {
				plans = append(plans, old)
				continue
			}
		}
		cl := cats[c]
		plans = append(plans, &ShardPlan{Name: c + ".json", URL: p.ShardURL(c + ".json"), category: c, Entries: cl.byID.Len(),
			header: h, policy: p, cat: *cl, idURLs: idURLs})
	}
	return plans
}

// categoriesOf are e's shardable categories, each once.
func categoriesOf(e *Encoded) []string {
	var out []string
	for i, c := range e.Categories {
		if ShardableCategory(c) && slices.Index(e.Categories, c) == i {
			out = append(out, c)
		}
	}
	return out
}

// BuildShards lays out and builds every shard of set.
func BuildShards(p Policy, h Header, set *Set) ([]Shard, error) {
	plans, err := PlanShards(p, h, set, nil)
	if err != nil {
		return nil, err
	}
	return buildPlans(plans)
}

func buildPlans(plans *Shards) ([]Shard, error) {
	out := make([]Shard, 0, len(plans.Plans))
	for _, sp := range plans.Plans {
		d, err := sp.Doc()
		if err != nil {
			return nil, fmt.Errorf("index: shard %s: %w", sp.Name, err)
		}
		sh := Shard{Name: sp.Name, URL: sp.URL, Body: d.Body.Bytes(), Entries: d.Listed, Mode: d.Mode}
		if sp.category == "" {
			for _, e := range sp.entries {
				sh.IDs = append(sh.IDs, e.ID)
			}
		}
		out = append(out, sh)
	}
	return out, nil
}

package index

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Set is the entries of one document kind, sorted by id and, on demand, by rank. Put and
// Remove keep both orders by one binary search and one copy each, so that a change of one
// entry costs no sort. A Set is not safe for concurrent use.
type Set struct {
	order  string
	byID   []*Encoded
	byRank []*Encoded // valid when ranked
	ranked bool
}

// NewSet returns a Set of entries ranked by order (OrderDownloads or OrderRecent); an id
// that appears twice is an error.
func NewSet(order string, entries []*Encoded) (*Set, error) {
	s := &Set{order: order, byID: slices.Clone(entries)}
	slices.SortFunc(s.byID, func(a, b *Encoded) int { return strings.Compare(a.ID, b.ID) })
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
	return slices.BinarySearchFunc(s.byID, id, func(e *Encoded, id string) int { return strings.Compare(e.ID, id) })
}

// Put adds e, or replaces the entry with its id; it returns the entry replaced (nil if none).
func (s *Set) Put(e *Encoded) *Encoded {
	i, ok := s.find(e.ID)
	var old *Encoded
	if ok {
		old = s.byID[i]
		s.byID[i] = e
	} else {
		s.byID = slices.Insert(s.byID, i, e)
	}
	if s.ranked {
		if old != nil {
			s.removeRanked(old)
		}
		cmpf := rankCompare(s.order)
		j, _ := slices.BinarySearchFunc(s.byRank, e, cmpf)
		s.byRank = slices.Insert(s.byRank, j, e)
	}
	return old
}

// Remove drops the entry with id and returns it (nil if none).
func (s *Set) Remove(id string) *Encoded {
	i, ok := s.find(id)
	if !ok {
		return nil
	}
	old := s.byID[i]
	s.byID = slices.Delete(s.byID, i, i+1)
	if s.ranked {
		s.removeRanked(old)
	}
	return old
}

func (s *Set) removeRanked(old *Encoded) {
	j, ok := slices.BinarySearchFunc(s.byRank, old, rankCompare(s.order))
	if ok && s.byRank[j] == old {
		s.byRank = slices.Delete(s.byRank, j, j+1)
		return
	}
	s.ranked = false // not where its key says (cannot happen for immutable entries): re-sort on demand
}

// categoryName is a category that gets a shard: URL-safe, and never "all" (the id shards).
var categoryName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// ShardableCategory reports whether category c has a shard of its own.
func ShardableCategory(c string) bool {
	return categoryName.MatchString(c) && c != "all" && !strings.HasPrefix(c, "all.")
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
	entries  []*Encoded // sorted by id (a copy)
	ranked   []*Encoded // category shards: by rank (a copy)
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
			sp.doc, sp.err = fitDoc(sp.policy, head, sp.entries, func() []*Encoded { return sp.entries }, len(sp.entries), sp.idURLs, nil)
			return
		}
		sp.doc, sp.err = fitDoc(sp.policy, head, sp.entries, func() []*Encoded { return sp.ranked }, len(sp.entries), sp.idURLs, nil)
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
	for _, p := range s.Plans {
		if p.Name == name {
			return p, true
		}
	}
	return nil, false
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
	if err := splitIDs(p, h, set.ByID(), "", false, &ids); err != nil {
		return nil, err
	}
	idURLs := make([]string, len(ids))
	for i, sp := range ids {
		idURLs[i] = sp.URL
	}
	cats := categoryPlans(p, h, set)
	for _, sp := range append(ids, cats...) {
		sp.idURLs = idURLs
		if old, ok := prev.reuse(sp); ok {
			sp = old
		}
		out.Plans = append(out.Plans, sp)
		out.byKey[sp.Name] = sp
	}
	return out, nil
}

func (s *Shards) reuse(sp *ShardPlan) (*ShardPlan, bool) {
	if s == nil {
		return nil, false
	}
	old, ok := s.byKey[sp.Name]
	if !ok || !slices.Equal(old.entries, sp.entries) || !slices.Equal(old.idURLs, sp.idURLs) {
		return nil, false
	}
	return old, true
}

// splitIDs adds the id shards of entries (sorted by id, all starting with prefix): one
// shard when they fit in full, else one per next id character, the id equal to prefix
// (exact) in a shard of its own.
func splitIDs(p Policy, h Header, entries []*Encoded, prefix string, exact bool, out *[]*ShardPlan) error {
	if len(entries) == 0 {
		return nil
	}
	head := len(kandevHead(h)) + len(`]}`)
	size := head
	for i, e := range entries {
		size += len(e.Full) + min(i, 1)
	}
	if size <= p.limit() || len(entries) == 1 {
		*out = append(*out, &ShardPlan{Name: idShardName(prefix), URL: p.ShardURL(idShardName(prefix)), Prefix: prefix, Exact: exact,
			Entries: len(entries), header: h, policy: p, entries: slices.Clone(entries)})
		return nil
	}
	i := 0
	if entries[0].ID == prefix {
		if err := splitIDs(p, h, entries[:1], prefix, true, out); err != nil {
			return err
		}
		i = 1
	}
	for i < len(entries) {
		c := entries[i].ID[len(prefix)]
		j := i
		for j < len(entries) && entries[j].ID[len(prefix)] == c {
			j++
		}
		if err := splitIDs(p, h, entries[i:j], prefix+string(c), false, out); err != nil {
			return err
		}
		i = j
	}
	return nil
}

func categoryPlans(p Policy, h Header, set *Set) []*ShardPlan {
	members := map[string][]*Encoded{}
	for _, e := range set.ByID() {
		for _, c := range categoriesOf(e) {
			members[c] = append(members[c], e)
		}
	}
	names := make([]string, 0, len(members))
	for c := range members {
		names = append(names, c)
	}
	slices.Sort(names)
	var ranked map[string][]*Encoded
	var plans []*ShardPlan
	for _, c := range names {
		sp := &ShardPlan{Name: c + ".json", URL: p.ShardURL(c + ".json"), category: c, Entries: len(members[c]),
			header: h, policy: p, entries: members[c]}
		if ranked == nil {
			ranked = map[string][]*Encoded{}
			for _, e := range set.ByRank() {
				for _, c := range categoriesOf(e) {
					ranked[c] = append(ranked[c], e)
				}
			}
		}
		sp.ranked = ranked[c]
		plans = append(plans, sp)
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
		sh := Shard{Name: sp.Name, URL: sp.URL, Body: d.Body, Entries: d.Listed, Mode: d.Mode}
		if sp.category == "" {
			for _, e := range sp.entries {
				sh.IDs = append(sh.IDs, e.ID)
			}
		}
		out = append(out, sh)
	}
	return out, nil
}

package index

import (
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/pluginyard/registry/problem"
)

// Bounds of the look-alike check.
const (
	// maxSimilarToAllowed is the most names one similar_to_allowed may hold: an entry that
	// resembles more than a handful of others needs a new name, not a longer list. It also
	// bounds the work: each entry passes over at most this many allowed look-alikes before
	// it has reported or finished.
	maxSimilarToAllowed = 16
	// maxLookalikesNamed is the most look-alikes reported for one entry; renaming it clears
	// them all, and a hostile list of thousands of separator variants of one name costs
	// this many comparisons per entry, not thousands.
	maxLookalikesNamed = 3
)

// The fixes a look-alike problem names.
const similarField = "similar_to_allowed"

// namespace is one section of the list whose names are compared with each other. Plugins
// and extensions are compared within their own section only: Kandev hosts read plugin ids
// from /index.json and Curupira hosts extension names from /curupira/index.json (contract
// §1 and §5), so neither host can be led from one kind to the other, while the one place
// the two kinds meet, the download URL, is guarded by registry.file_id.collision.
type namespace struct {
	kind, section, key string // "plugin id", "plugins", "id"
	names              []string
	allow              [][]string // each entry's similar_to_allowed
}

func (l *List) namespaces() [2]namespace {
	p := namespace{kind: "plugin id", section: "plugins", key: "id"}
	for _, e := range l.Plugins {
		p.names, p.allow = append(p.names, e.ID), append(p.allow, e.SimilarToAllowed)
	}
	x := namespace{kind: "extension name", section: "extensions", key: "name"}
	for _, e := range l.Extensions {
		x.names, x.allow = append(x.names, e.Name), append(x.allow, e.SimilarToAllowed)
	}
	return [2]namespace{p, x}
}

// allows reports whether an entry of ns has a similar_to_allowed.
func (ns namespace) allows() bool {
	return slices.ContainsFunc(ns.allow, func(a []string) bool { return len(a) > 0 })
}

// CheckLookalikes reports every plugin id (and extension name) of l that a person could
// take for an earlier one of the same section: the same once case is ignored, once the
// separators '-', '_' and '.' are, once look-alike characters are mapped to one spelling
// (a confusable skeleton), or, for short names, one edit apart; unless one of the two
// entries names the other in similar_to_allowed. It also reports similar_to_allowed
// values that name no listed entry, the entry itself, or an entry it does not resemble.
// data is the list's source, read for positions; with nil, paths have none. ParseList and
// LoadList apply it already; it is for lists built in Go.
func CheckLookalikes(data []byte, l *List) problem.List {
	if l == nil {
		return nil
	}
	var root *yaml.Node
	var doc yaml.Node
	if data != nil && yaml.Unmarshal(data, &doc) == nil && len(doc.Content) > 0 {
		root = doc.Content[0]
	}
	d := &decoder{}
	d.lookalikes(root, l)
	return d.problems()
}

// lookalikes is CheckLookalikes on a list being decoded, root its document's root mapping.
func (d *decoder) lookalikes(root *yaml.Node, l *List) {
	pos := rootPositions(root)
	nss := l.namespaces()
	var allowNodes map[string]map[string][]valueAt // nil (no walk) when nothing is allowed
	if nss[0].allows() || nss[1].allows() {
		allowNodes = similarNodes(root)
	}
	k := newKeyer()
	for _, ns := range nss {
		first := pos.plugins
		if ns.section == "extensions" {
			first = pos.extensions
		}
		at := func(i int) (string, int, int) {
			p, ok := first[ns.names[i]]
			if !ok {
				return fmt.Sprintf("%s[%d].%s", ns.section, i, ns.key), 0, 0
			}
			return p.path(), p.line, p.column
		}
		c := newLookalikeCheck(k, ns)
		c.run(d, at)
		c.allowances(d, at, allowNodes[ns.section])
	}
}

// lookalikeCheck finds look-alikes in one namespace in one pass: each name is looked up,
// then added, in two indexes. bySkel buckets the names by skeleton, which finds the case,
// separator and confusable matches at once (equal folds and equal separator-free forms
// give equal skeletons); byDel holds, for each short name, its deletion neighbourhood (the
// name and the name less any one rune, deletions), so that the names one edit away are
// found among the few that share a key instead of among all pairs. The cost is linear in
// the names, times the length of a short name.
type lookalikeCheck struct {
	ns     namespace
	keys   []nameKeys
	index  map[string]int // name → position
	bySkel map[string][]int
	byDel  map[string][]int
	seen   []int // seen[i] == j+1: candidate i was already considered for name j
	dels   []string
}

func newLookalikeCheck(k *keyer, ns namespace) *lookalikeCheck {
	c := &lookalikeCheck{ns: ns, keys: make([]nameKeys, len(ns.names)), index: make(map[string]int, len(ns.names)),
		bySkel: make(map[string][]int, len(ns.names)), byDel: make(map[string][]int, 4*len(ns.names)), seen: make([]int, len(ns.names))}
	for i, n := range ns.names {
		c.keys[i] = k.keys(n)
		if _, dup := c.index[n]; !dup {
			c.index[n] = i
		}
	}
	return c
}

// run reports, for each name, up to maxLookalikesNamed earlier names it resembles.
func (c *lookalikeCheck) run(d *decoder, at func(int) (string, int, int)) {
	for j := range c.ns.names {
		kj := c.keys[j]
		found := 0
		for _, i := range c.bySkel[kj.skel] {
			if found == maxLookalikesNamed {
				break
			}
			if !c.allowed(i, j) {
				c.report(d, at, i, j, c.reason(i, j))
				found++
			}
		}
		if kj.short {
			c.dels = deletions(kj.sep, c.dels)
			c.nearby(d, at, j, found)
		}
		c.bySkel[kj.skel] = append(c.bySkel[kj.skel], j)
		if kj.short {
			for _, del := range c.dels {
				c.byDel[del] = append(c.byDel[del], j)
			}
		}
	}
}

// nearby reports the earlier short names one edit from name j (c.dels holds its deletion
// neighbourhood), after found reports already made for it.
func (c *lookalikeCheck) nearby(d *decoder, at func(int) (string, int, int), j, found int) {
	kj := c.keys[j]
	for _, del := range c.dels {
		for _, i := range c.byDel[del] {
			if found == maxLookalikesNamed {
				return
			}
			if c.seen[i] == j+1 {
				continue
			}
			c.seen[i] = j + 1
			ki := c.keys[i]
			if ki.skel == kj.skel || !oneEditApart(ki.sep, kj.sep) || c.allowed(i, j) {
				continue // a skeleton match is reported already
			}
			c.report(d, at, i, j, fmt.Sprintf("they are one edit apart (%q and %q: a character added, removed or replaced, or two neighbours swapped), "+
				"and short names (%d to %d characters without separators) are one typo from each other", ki.sep, kj.sep, minShortName, maxShortName))
			found++
		}
	}
}

// allowed reports whether either of names i and j names the other in similar_to_allowed.
func (c *lookalikeCheck) allowed(i, j int) bool {
	return slices.Contains(c.ns.allow[j], c.ns.names[i]) || slices.Contains(c.ns.allow[i], c.ns.names[j])
}

// reason says why names i and j, of equal skeletons, look alike, naming the finest
// normalisation under which they are equal.
func (c *lookalikeCheck) reason(i, j int) string {
	ki, kj := c.keys[i], c.keys[j]
	switch {
	case ki.fold == kj.fold:
		return "they differ only in letter case"
	case ki.sep == kj.sep:
		return fmt.Sprintf("they are the same (%q) once case and the separators '-', '_' and '.' are ignored", kj.sep)
	}
	return fmt.Sprintf("they read the same (%q) once look-alike characters are mapped to one spelling "+
		"(0 and o, 1, i and l, rn and m, vv and w, Cyrillic and Greek letters that render as Latin ones, accents dropped)", kj.skel)
}

// lookalike reports whether names i and j are look-alikes by any of the four tests.
func (c *lookalikeCheck) lookalike(i, j int) bool {
	ki, kj := c.keys[i], c.keys[j]
	return ki.skel == kj.skel || (ki.short && kj.short && oneEditApart(ki.sep, kj.sep))
}

func (c *lookalikeCheck) report(d *decoder, at func(int) (string, int, int), i, j int, why string) {
	path, line, col := at(j)
	prevPath, prevLine, _ := at(i)
	prev := prevPath
	if prevLine > 0 {
		prev = fmt.Sprintf("%s, line %d", prevPath, prevLine)
	}
	name, other := c.ns.names[j], c.ns.names[i]
	addAtIfKnown(d, problem.Error, line, col, "registry.id.confusable", path, fmt.Sprintf(
		"%s %q looks like %q (%s): %s, so a person or a typo can install one for the other. "+
			"Rename it; or, when both are genuine and their publishers distinct on purpose, add `%s: %s` to this entry",
		c.ns.kind, name, other, prev, why, similarField, other))
}

// allowances checks every similar_to_allowed value: it names a listed entry of the same
// section, not the entry itself, that the entry does resemble (a warning: an allowance
// that allows nothing is most likely a misspelt name or a rename that left it behind).
func (c *lookalikeCheck) allowances(d *decoder, at func(int) (string, int, int), nodes map[string][]valueAt) {
	for j, allow := range c.ns.allow {
		name := c.ns.names[j]
		if c.index[name] != j {
			continue // a duplicate entry, reported as one and dropped
		}
		for k, other := range allow {
			where := c.allowAt(at, nodes[name], j, k)
			i, listed := c.index[other]
			switch {
			case other == name:
				addAtIfKnown(d, problem.Error, where.line, where.col, "registry.similar_to_allowed", where.path,
					fmt.Sprintf("%s names the entry itself (%q); it names the other entry this one may resemble", similarField, other))
			case !listed:
				hint := ""
				if s := problem.DidYouMean(other, c.ns.names, nil); s != "" {
					hint = "; " + s
				}
				addAtIfKnown(d, problem.Error, where.line, where.col, "registry.similar_to_allowed.unknown", where.path,
					fmt.Sprintf("expected a %s listed under %s:, found %q, which is not%s; name the entry this one may resemble, or remove the value",
						c.ns.kind, c.ns.section, other, hint))
			case !c.lookalike(i, j):
				addAtIfKnown(d, problem.Warning, where.line, where.col, "registry.similar_to_allowed.unused", where.path,
					fmt.Sprintf("%q and %q are not look-alikes (not the same once case, separators and look-alike characters are ignored, nor one edit apart while short), "+
						"so this allows nothing; remove it", name, other))
			}
		}
	}
}

// valueAt is where one similar_to_allowed value is written.
type valueAt struct {
	path      string
	line, col int
}

// allowAt is where value k of name j's similar_to_allowed is written; without a source,
// the entry's own position.
func (c *lookalikeCheck) allowAt(at func(int) (string, int, int), nodes []valueAt, j, k int) valueAt {
	if k < len(nodes) {
		return nodes[k]
	}
	path, line, col := at(j)
	return valueAt{path: path, line: line, col: col}
}

// addAtIfKnown adds a problem at line and column, or, for a list without a source (line
// 0), with the field path alone.
func addAtIfKnown(d *decoder, sev problem.Severity, line, col int, rule, path, msg string) {
	if line > 0 {
		d.addAt(sev, line, col, rule, path, msg)
		return
	}
	d.found = append(d.found, located{p: problem.Problem{Rule: rule, Path: path, Message: msg, Severity: sev}})
}

// similarNodes finds, per section and per name (its first entry), where each
// similar_to_allowed value is written. Like rootPositions, it is linear in the document.
func similarNodes(root *yaml.Node) map[string]map[string][]valueAt {
	out := map[string]map[string][]valueAt{}
	if root == nil || root.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch sec, v := root.Content[i].Value, root.Content[i+1]; sec {
		case "plugins":
			out[sec] = sectionSimilarNodes(v, sec, "id")
		case "extensions":
			out[sec] = sectionSimilarNodes(v, sec, "name")
		}
	}
	return out
}

func sectionSimilarNodes(seq *yaml.Node, section, key string) map[string][]valueAt {
	out := map[string][]valueAt{}
	if seq.Kind != yaml.SequenceNode {
		return out
	}
	for i, item := range seq.Content {
		if item.Kind != yaml.MappingNode {
			continue
		}
		var name string
		var allow *yaml.Node
		for j := 0; j+1 < len(item.Content); j += 2 {
			switch k, v := item.Content[j].Value, item.Content[j+1]; {
			case k == key && v.Kind == yaml.ScalarNode:
				name = v.Value
			case k == similarField:
				allow = v
			}
		}
		if _, seen := out[name]; seen || allow == nil || name == "" {
			continue
		}
		base := fmt.Sprintf("%s[%d].%s", section, i, similarField)
		if allow.Kind == yaml.ScalarNode {
			out[name] = []valueAt{{path: base, line: allow.Line, col: allow.Column}}
			continue
		}
		for k, v := range allow.Content {
			out[name] = append(out[name], valueAt{path: fmt.Sprintf("%s[%d]", base, k), line: v.Line, col: v.Column})
		}
	}
	return out
}

// similarToAllowed decodes an entry's similar_to_allowed: one name or a list of them,
// each valid as check says, at most maxSimilarToAllowed. Whether each names a listed entry
// is for the look-alike check, once the whole list is decoded.
func (d *decoder) similarToAllowed(n *yaml.Node, path string, check func(string) string) []string {
	switch {
	case isNull(n):
		return nil
	case n.Kind == yaml.ScalarNode:
		s, ok := d.str(n, path)
		if !ok {
			return nil
		}
		if msg := check(s); msg != "" {
			d.errorf(n, "registry.similar_to_allowed", path, "%s", msg)
			return nil
		}
		return []string{s}
	case n.Kind == yaml.MappingNode:
		d.errorf(n, "registry.field.type", path, "expected a name or a list of names, found %s", describe(n))
		return nil
	}
	out := d.strs(n, path, "registry.similar_to_allowed", check)
	if len(out) > maxSimilarToAllowed {
		d.errorf(n, "registry.similar_to_allowed", path, "expected at most %d names, found %d; an entry that resembles this many others needs a distinct name",
			maxSimilarToAllowed, len(out))
		out = out[:maxSimilarToAllowed]
	}
	return out
}

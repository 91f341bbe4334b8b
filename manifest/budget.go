package manifest

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/pluginyard/registry/problem"
)

// The work budget of one manifest.yaml document. YAML aliases and "<<" merge keys let a few
// bytes stand for a huge tree, so the document is measured as it will be decoded: every alias
// (and so every merge of an alias) costs the full size of the subtree it names. The budget is
// checked on the parsed node tree, before anything is decoded, so a refused document costs
// time linear in its bytes.
//
// The largest real manifest (corpus) expands to 816 nodes and 6.5 KiB of scalars and nests
// 13 levels deep; the limits leave room for manifests hundreds of times larger while keeping
// the decode of any accepted document to a few hundred milliseconds.
const (
	// MaxExpandedNodes bounds the YAML nodes of the document after alias and merge expansion.
	MaxExpandedNodes = 200_000
	// MaxExpandedBytes bounds the scalar bytes of the document after alias and merge expansion
	// (a manifest is at most 1 MiB, so only aliases can exceed it).
	MaxExpandedBytes = 2 << 20
	// MaxDepth bounds how deeply mappings and lists nest, aliases followed.
	MaxDepth = 64
)

// saturated stands for "more than anyone can count": sizes stop growing there, so an
// exponential alias chain cannot overflow.
const saturated = int64(1) << 60

// Cost is the expanded size of a YAML subtree.
type Cost struct {
	Nodes int64 // nodes, aliases counted as the subtree they name
	Bytes int64 // scalar bytes, likewise
	Depth int   // nesting of mappings and lists
	Cycle bool  // an alias names an anchor that contains it: the expansion is infinite
}

// Expanded returns the expanded size of the tree below n, in time linear in the number of
// nodes actually in the tree: each anchor's size is computed once and reused for every alias.
func Expanded(n *yaml.Node) Cost {
	s := sizer{memo: map[*yaml.Node]Cost{}, active: map[*yaml.Node]bool{}}
	return s.size(n)
}

type sizer struct {
	memo   map[*yaml.Node]Cost
	active map[*yaml.Node]bool
}

func (s *sizer) size(n *yaml.Node) Cost {
	if n == nil {
		return Cost{}
	}
	if n.Kind == yaml.AliasNode {
		return s.size(n.Alias)
	}
	// Only anchors can be reached twice (through their aliases), so only they are memoised
	// and only they can close a cycle.
	anchored := n.Anchor != ""
	if anchored {
		if c, ok := s.memo[n]; ok {
			return c
		}
		if s.active[n] {
			return Cost{Nodes: saturated, Bytes: saturated, Depth: MaxDepth + 1, Cycle: true}
		}
		s.active[n] = true
	}
	c := Cost{Nodes: 1, Bytes: int64(len(n.Value))}
	for _, child := range n.Content {
		cc := s.size(child)
		c.Nodes = satAdd(c.Nodes, cc.Nodes)
		c.Bytes = satAdd(c.Bytes, cc.Bytes)
		c.Depth = max(c.Depth, cc.Depth)
		c.Cycle = c.Cycle || cc.Cycle
	}
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		c.Depth = min(c.Depth+1, MaxDepth+1)
	}
	if anchored {
		delete(s.active, n)
		s.memo[n] = c
	}
	return c
}

func satAdd(a, b int64) int64 {
	return min(a+b, saturated)
}

// checkBudget reports the document's budget problems: an alias cycle, too many expanded
// nodes or bytes, or too deep a nesting.
func checkBudget(doc *yaml.Node) problem.List {
	var probs problem.List
	c := Expanded(doc)
	const fix = "remove anchors, aliases and << merge keys that repeat large blocks"
	switch {
	case c.Cycle:
		probs.Errorf("manifest.yaml.budget", "", "expected aliases that name finished anchors, found an alias inside the anchor it names (an infinite expansion); %s", fix)
	case c.Nodes > MaxExpandedNodes:
		probs.Errorf("manifest.yaml.budget", "", "expected at most %d YAML nodes after expanding aliases and merge keys, found %s; %s", MaxExpandedNodes, count(c.Nodes), fix)
	case c.Bytes > MaxExpandedBytes:
		probs.Errorf("manifest.yaml.budget", "", "expected at most %d bytes of YAML values after expanding aliases and merge keys, found %s; %s", MaxExpandedBytes, count(c.Bytes), fix)
	}
	if !c.Cycle && c.Depth > MaxDepth {
		probs.Errorf("manifest.yaml.depth", "", "expected mappings and lists nested at most %d levels deep, found more than %d; flatten the structure", MaxDepth, MaxDepth)
	}
	return probs
}

func count(n int64) string {
	if n >= saturated {
		return fmt.Sprintf("more than %d", saturated)
	}
	return fmt.Sprint(n)
}

package index

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"

	goccy "github.com/goccy/go-yaml"
	goccyparser "github.com/goccy/go-yaml/parser"
	"gopkg.in/yaml.v3"

	"github.com/pluginyard/registry/problem"
)

// decoder walks a yaml.Node tree and collects problems with their positions.
type decoder struct {
	found []located
	known []string // manifest.Categories(), once asked (knownCategories)
}

type located struct {
	p         problem.Problem
	line, col int
}

func (d *decoder) add(sev problem.Severity, n *yaml.Node, rule, path, format string, args ...any) {
	line, col := 1, 1
	if n != nil && n.Line > 0 {
		line, col = n.Line, n.Column
	}
	d.addAt(sev, line, col, rule, path, fmt.Sprintf(format, args...))
}

func (d *decoder) addAt(sev problem.Severity, line, col int, rule, path, msg string) {
	where := fmt.Sprintf("line %d, column %d", line, col)
	if path != "" {
		where = fmt.Sprintf("%s (%s)", path, where)
	}
	d.found = append(d.found, located{
		p:    problem.Problem{Rule: rule, Path: where, Message: msg, Severity: sev},
		line: line, col: col,
	})
}

func (d *decoder) errorf(n *yaml.Node, rule, path, format string, args ...any) {
	d.add(problem.Error, n, rule, path, format, args...)
}

func (d *decoder) warnf(n *yaml.Node, rule, path, format string, args ...any) {
	d.add(problem.Warning, n, rule, path, format, args...)
}

// problems returns what was found in document order.
func (d *decoder) problems() problem.List {
	sort.SliceStable(d.found, func(i, j int) bool {
		a, b := d.found[i], d.found[j]
		if a.line != b.line {
			return a.line < b.line
		}
		return a.col < b.col
	})
	var out problem.List
	for _, f := range d.found {
		out = append(out, f.p)
	}
	return out
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

// document decodes data into its single root node, reporting syntax errors, an empty file,
// extra documents, anchors and aliases.
func (d *decoder) document(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.addAt(problem.Error, 1, 1, "registry.yaml", "", "the file is empty; expected a mapping with a top-level plugins: list")
		} else {
			d.syntax(data, err)
		}
		return nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		d.errorf(&extra, "registry.yaml", "", "expected one YAML document, found a second one (---); merge them into one")
	case !errors.Is(err, io.EOF):
		d.syntax(data, err)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	d.noAliases(doc.Content[0])
	return doc.Content[0]
}

// syntax reports a YAML syntax error where it is. yaml.v3 names only a line, and the line
// where the enclosing construct began rather than the one at fault; goccy/go-yaml's parser
// names the token at fault, so its position and words are used when it finds the error too,
// and yaml.v3's line (column 1) otherwise.
func (d *decoder) syntax(data []byte, err error) {
	if line, col, msg, ok := syntaxAt(data); ok {
		d.addAt(problem.Error, line, col, "registry.yaml", "", "expected valid YAML, found a syntax error: "+msg)
		return
	}
	line := 1
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		if n, convErr := strconv.Atoi(m[1]); convErr == nil && n > 0 {
			line = n
		}
	}
	d.addAt(problem.Error, line, 1, "registry.yaml", "", fmt.Sprintf("the file is not valid YAML: %v", err))
}

// syntaxAt parses data with goccy/go-yaml and returns the position and message of the
// syntax error it finds; ok is false when it finds none (or fails in any other way).
func syntaxAt(data []byte) (line, col int, msg string, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false // a parser bug must not take lint down: yaml.v3's line stands
		}
	}()
	_, err := goccyparser.ParseBytes(data, 0)
	var se *goccy.SyntaxError
	if !errors.As(err, &se) || se.Token == nil || se.Token.Position == nil || se.Token.Position.Line < 1 {
		return 0, 0, "", false
	}
	return se.Token.Position.Line, max(1, se.Token.Position.Column), se.Message, true
}

// noAliases reports every anchor and alias: a curated list spells each entry out, and
// refusing aliases bounds the work of decoding a hostile file.
func (d *decoder) noAliases(n *yaml.Node) {
	if n.Kind == yaml.AliasNode {
		d.errorf(n, "registry.yaml.alias", "", "found the alias *%s; plugins.yaml does not support anchors and aliases, write the value out", n.Value)
		return
	}
	if n.Anchor != "" {
		d.errorf(n, "registry.yaml.alias", "", "found the anchor &%s; plugins.yaml does not support anchors and aliases, write the value out", n.Anchor)
	}
	for _, c := range n.Content {
		d.noAliases(c)
	}
}

// describe names what a node holds, for "expected X, found Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.Tag {
	case "!!null":
		return "nothing (null)"
	case "!!bool":
		return fmt.Sprintf("the boolean %s", n.Value)
	case "!!int", "!!float":
		return fmt.Sprintf("the number %s", n.Value)
	case "!!str":
		return fmt.Sprintf("the string %q", n.Value)
	}
	return fmt.Sprintf("a value tagged %s", n.Tag)
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// maxFields is the most fields any mapping of plugins.yaml knows (a plugin entry's), with
// room for one more.
const maxFields = 12

// fieldVals is a mapping's fields as fields found them: the value and key node of each known
// field, in the order of known (nil when absent). It is a value, so that decoding an entry
// allocates no map.
type fieldVals struct {
	known      []string
	vals, keys [maxFields]*yaml.Node
}

// get returns the value node of the known field name, nil when the mapping lacks it.
func (f *fieldVals) get(name string) *yaml.Node {
	for i, k := range f.known {
		if k == name {
			return f.vals[i]
		}
	}
	return nil
}

// fields checks that n is a mapping whose keys are all known and unique, and returns the
// value node and the key node of each known key. known has at most maxFields names.
func (d *decoder) fields(n *yaml.Node, path string, known []string) (f fieldVals, ok bool) {
	if n.Kind != yaml.MappingNode {
		if n.Kind != yaml.AliasNode {
			d.errorf(n, "registry.field.type", path, "expected a mapping, found %s", describe(n))
		}
		return f, false
	}
	f.known = known
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		at := -1
		if k.Kind == yaml.ScalarNode {
			at = indexOf(known, k.Value)
		}
		switch {
		case k.Kind != yaml.ScalarNode:
			d.errorf(k, "registry.field.type", path, "expected a field name, found %s", describe(k))
		case at < 0:
			d.errorf(k, "registry.field.unknown", join(path, k.Value), "unknown field %q; expected one of %v", k.Value, known)
		case f.keys[at] != nil:
			d.errorf(k, "registry.field.duplicate", join(path, k.Value), "field %q is given twice (first at line %d); keep one", k.Value, f.keys[at].Line)
		default:
			f.vals[at], f.keys[at] = v, k
		}
	}
	return f, true
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// indexOf returns the position of s in list, -1 when absent.
func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// str decodes a scalar string. Numbers are accepted as their text (an id may be "2048").
func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	if s, ok := strValue(n); ok {
		return s, true
	}
	if n.Kind != yaml.AliasNode {
		d.errorf(n, "registry.field.type", path, "expected a string, found %s", describe(n))
	}
	return "", false
}

// strValue is the string a scalar holds, as str accepts it; ok is false for anything else.
func strValue(n *yaml.Node) (string, bool) {
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!str" || n.Tag == "!!int" || n.Tag == "!!float") {
		return n.Value, true
	}
	return "", false
}

// boolean decodes true or false.
func (d *decoder) boolean(n *yaml.Node, path string) bool {
	var b bool
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" && n.Decode(&b) == nil {
		return b
	}
	if n.Kind != yaml.AliasNode {
		d.errorf(n, "registry.field.type", path, "expected true or false, found %s", describe(n))
	}
	return false
}

// seq returns the items of a list; null is an empty list.
func (d *decoder) seq(n *yaml.Node, path string) []*yaml.Node {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		if n.Kind != yaml.AliasNode {
			d.errorf(n, "registry.field.type", path, "expected a list, found %s", describe(n))
		}
		return nil
	}
	return n.Content
}

// strs decodes a list of non-empty strings, warning about duplicates. check, when set,
// returns why one item is invalid (reported under rule).
func (d *decoder) strs(n *yaml.Node, path, rule string, check func(string) string) []string {
	var out []string
	seen := map[string]bool{} // does not escape: on the stack while it is small
	for i, item := range d.seq(n, path) {
		ip := func() string { return fmt.Sprintf("%s[%d]", path, i) } // only a problem needs it
		s, ok := strValue(item)
		if !ok {
			d.str(item, ip()) // reports it
			continue
		}
		if msg := check(s); msg != "" {
			d.errorf(item, rule, ip(), "%s", msg)
			continue
		}
		if seen[s] {
			d.warnf(item, rule, ip(), "%q is listed twice; remove the repetition", s)
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

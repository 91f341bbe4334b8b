package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/pluginyard/registry/problem"
)

// Parse decodes a manifest without validating it. YAML syntax errors, a second document, a
// document over the work budget (see MaxExpandedNodes), a non-mapping root and values of the
// wrong type are errors with their field path; unknown fields are warnings (rule
// manifest.unknown_field). The manifest is nil only when the YAML cannot be read at all.
func Parse(data []byte) (*Manifest, problem.List) {
	doc, probs := readDocument(data)
	if probs != nil {
		return nil, probs.InFile(FileName)
	}
	if probs := checkBudget(doc); probs != nil {
		return nil, probs.InFile(FileName)
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if doc.Kind != yaml.MappingNode {
		probs.Errorf("manifest.yaml.root", "", "expected a YAML mapping of manifest fields at the top level, found %s; start the file with fields such as \"id:\"", describeNode(doc))
		return nil, probs.InFile(FileName)
	}
	d := newDecoder()
	var m Manifest
	d.decode(doc, reflect.ValueOf(&m).Elem(), "")
	return &m, bounded(d.probs).InFile(FileName)
}

// Check parses and validates a manifest. The manifest is nil when it cannot be parsed.
func Check(data []byte, files Files) (*Manifest, problem.List) {
	m, probs := Parse(data)
	if m == nil {
		return nil, probs
	}
	return m, append(probs, m.Validate(files)...)
}

// readDocument parses data into a node tree (linear in its bytes: aliases stay pointers) and
// refuses a stream of more than one document, which hosts would silently cut to the first.
func readDocument(data []byte) (*yaml.Node, problem.List) {
	var probs problem.List
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		probs.Errorf("manifest.yaml.syntax", "", "expected valid YAML, found a syntax error (%s); fix the YAML syntax", yamlMessage(err))
		return nil, probs
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
		return &doc, nil
	case err != nil:
		probs.Errorf("manifest.yaml.documents", "", "expected one YAML document, found more after the first (\"---\" separator), and the next does not parse (%s); keep only the manifest's own document", yamlMessage(err))
	default:
		probs.Errorf("manifest.yaml.documents", "", "expected one YAML document, found another starting at line %d (after a \"---\" separator); hosts read only the first, so keep only the manifest's own document", next.Line)
	}
	return nil, probs
}

// decoder decodes a budget-checked node tree into the manifest types. Its work is linear in
// the expanded size of the tree, which checkBudget bounds.
type decoder struct {
	probs problem.List
	// entries memoises the effective entries of each mapping node, so a mapping merged or
	// aliased many times is resolved, and its duplicate keys reported, once.
	entries map[*yaml.Node][]entry
	// warned holds key nodes already reported as unknown fields: an aliased block of unknown
	// fields is reported once, where it first appears.
	warned map[*yaml.Node]bool
}

func newDecoder() *decoder {
	return &decoder{entries: map[*yaml.Node][]entry{}, warned: map[*yaml.Node]bool{}}
}

// entry is one effective key of a mapping, its own or merged in.
type entry struct {
	key       string
	keyNode   *yaml.Node
	valueNode *yaml.Node
}

func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	n = resolve(n)
	if n == nil || n.Tag == "!!null" {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		elem := reflect.New(v.Type().Elem())
		d.decode(n, elem.Elem(), path)
		v.Set(elem)
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Slice:
		d.decodeSlice(n, v, path)
	case reflect.Map:
		d.decodeMap(n, v, path)
	default:
		d.decodeScalar(n, v, path)
	}
}

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.typeError(n, path, "mapping of fields")
		return
	}
	fields := structFields(v.Type())
	for _, e := range d.mapping(n, path) {
		idx, ok := fields[e.key]
		if !ok {
			if !d.warned[e.keyNode] {
				d.warned[e.keyNode] = true
				d.probs.Warnf("manifest.unknown_field", join(path, e.key), "expected a field of the Kandev manifest reference, found unknown field %q (line %d); hosts ignore it: %s", truncate(e.key, 60), e.keyNode.Line, d.unknownFix(e.key, fields))
			}
			continue
		}
		d.decode(e.valueNode, v.Field(idx), join(path, e.key))
	}
}

// maxSuggested bounds the unknown fields that get a "did you mean": a manifest made of
// thousands of unknown keys then costs a bounded number of edit-distance comparisons.
const maxSuggested = 20

// fieldAliases are names authors write for a field under another name (from other
// manifest formats); Suggest offers the target only where it is a field at that level.
var fieldAliases = map[string]string{
	"name": "display_name", "title": "display_name", "displayname": "display_name",
	"desc": "description", "summary": "description",
	"repo": "repo_url", "repository": "repo_url", "repository_url": "repo_url", "source": "repo_url",
	"url": "homepage", "website": "homepage",
	"category": "categories", "tags": "categories", "keywords": "categories",
	"authors": "author", "publisher": "author",
	"min_version": "min_kandev_version", "kandev_version": "min_kandev_version", "engines": "min_kandev_version",
	"permissions": "capabilities",
}

// unknownFix is the advice for an unknown field: the nearest known field of its level when
// one is near, else remove or respell.
func (d *decoder) unknownFix(key string, fields map[string]int) string {
	if len(d.warned) <= maxSuggested {
		known := make([]string, 0, len(fields))
		for name := range fields {
			known = append(known, name)
		}
		sort.Strings(known)
		if s := problem.DidYouMean(key, known, fieldAliases); s != "" {
			return s + " Otherwise remove it"
		}
	}
	return "remove it or check its spelling"
}

// mapping returns the effective entries of mapping n as yaml.v3 resolves them: its own keys
// in order, then the keys of its "<<" merges that it does not set itself, earlier merges
// first. Own keys given twice are reported (the host refuses them); merged keys never are.
func (d *decoder) mapping(n *yaml.Node, path string) []entry {
	if out, ok := d.entries[n]; ok {
		return out
	}
	d.entries[n] = nil // a merge cycle cannot pass checkBudget; this only guards recursion
	var out []entry
	var merges []*yaml.Node
	lines := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := resolve(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			d.probs.Errorf("manifest.type", path, "expected a plain string key, found %s at line %d; use simple field names", describeNode(n.Content[i]), n.Content[i].Line)
			continue
		}
		if line, dup := lines[k.Value]; dup {
			d.probs.Errorf("manifest.yaml.duplicate_key", join(path, k.Value), "expected each key once, found %q again at line %d (first at line %d); remove the duplicate", truncate(k.Value, 60), k.Line, line)
			continue
		}
		lines[k.Value] = k.Line
		if isMerge(n.Content[i]) {
			merges = append(merges, val)
			continue
		}
		out = append(out, entry{k.Value, k, val})
	}
	for _, m := range merges {
		for _, e := range d.merged(m, path) {
			if _, set := lines[e.key]; !set {
				lines[e.key] = e.keyNode.Line
				out = append(out, e)
			}
		}
	}
	d.entries[n] = out
	return out
}

// merged returns the entries a "<<" value brings: a mapping's, or those of a list of
// mappings in order.
func (d *decoder) merged(val *yaml.Node, path string) []entry {
	val = resolve(val)
	switch val.Kind {
	case yaml.MappingNode:
		return d.mapping(val, path)
	case yaml.SequenceNode:
		var out []entry
		for _, item := range val.Content {
			if item = resolve(item); item.Kind != yaml.MappingNode {
				d.typeError(item, path, "mapping to merge")
				continue
			}
			out = append(out, d.mapping(item, path)...)
		}
		return out
	default:
		d.typeError(val, path, "mapping to merge")
		return nil
	}
}

// isMerge reports whether k is the "<<" merge key (plain, or tagged !!merge).
func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Tag == "!!merge" && k.Value == "<<"
}

func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.typeError(n, path, "list")
		return
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.decode(item, out.Index(i), fmt.Sprintf("%s[%d]", path, i))
	}
	v.Set(out)
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.typeError(n, path, "mapping")
		return
	}
	if v.Type().Elem().Kind() == reflect.Interface {
		v.Set(reflect.ValueOf(d.freeStringMap(n, path)))
		return
	}
	entries := d.mapping(n, path)
	out := reflect.MakeMapWithSize(v.Type(), len(entries))
	for _, e := range entries {
		elem := reflect.New(v.Type().Elem()).Elem()
		d.decode(e.valueNode, elem, join(path, e.key))
		out.SetMapIndex(reflect.ValueOf(e.key), elem)
	}
	v.Set(out)
}

func (d *decoder) decodeScalar(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode {
		d.typeError(n, path, kindName(v.Kind()))
		return
	}
	if err := n.Decode(v.Addr().Interface()); err != nil {
		d.typeError(n, path, kindName(v.Kind()))
	}
}

func (d *decoder) typeError(n *yaml.Node, path, want string) {
	d.probs.Errorf("manifest.type", path, "expected a %s, found %s at line %d; change the value to a %s", want, describeNode(n), n.Line, want)
}

// structFields maps yaml tag names to field indexes.
func structFields(t reflect.Type) map[string]int {
	out := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name != "" && name != "-" && f.IsExported() {
			out[name] = i
		}
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func kindName(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean (true or false)"
	case reflect.Int, reflect.Int64:
		return "whole number"
	default:
		return k.String()
	}
}

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%s %q", strings.TrimPrefix(n.Tag, "!!"), truncate(n.Value, 60))
	case 0:
		return "an empty document"
	default:
		return "an unsupported YAML node"
	}
}

// maxMessage bounds a problem message in bytes. Rules quote the value they found; bounding
// the message keeps a problem about a huge value short, wherever the rule quotes it.
const maxMessage = 1024

// bounded shortens every message over maxMessage, keeping its start (what was expected and
// found) and its end (the fix).
func bounded(l problem.List) problem.List {
	for i, p := range l {
		msg := p.Message
		if len(msg) <= maxMessage {
			continue
		}
		h := maxMessage * 3 / 4
		for h > 0 && !utf8.RuneStart(msg[h]) {
			h--
		}
		t := len(msg) - maxMessage/5
		for t < len(msg) && !utf8.RuneStart(msg[t]) {
			t++
		}
		l[i].Message = fmt.Sprintf("%s… [%d bytes cut] …%s", msg[:h], t-h, msg[t:])
	}
	return l
}

// truncate cuts s to at most n bytes, at a rune boundary, marking the cut, so a message never
// repeats a huge value.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// yamlMessage strips the package prefix from a yaml.v3 error.
func yamlMessage(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return strings.Join(te.Errors, "; ")
	}
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

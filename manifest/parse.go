package manifest

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/pluginyard/registry/problem"
)

// maxNodes bounds how many YAML nodes the decoder visits, so alias chains
// ("billion laughs") cannot make one manifest cost unbounded time.
const maxNodes = 200_000

// Parse decodes a manifest without validating it. YAML syntax errors, a non-mapping root
// and values of the wrong type are errors with their field path; unknown fields are
// warnings (rule manifest.unknown_field). The manifest is nil only when the YAML cannot
// be read at all.
func Parse(data []byte) (*Manifest, problem.List) {
	var probs problem.List
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		probs.Errorf("manifest.yaml.syntax", "", "expected valid YAML, found a syntax error (%s); fix the YAML syntax", yamlMessage(err))
		return nil, probs.InFile(FileName)
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if doc.Kind != yaml.MappingNode {
		probs.Errorf("manifest.yaml.root", "", "expected a YAML mapping of manifest fields at the top level, found %s; start the file with fields such as \"id:\"", describeNode(doc))
		return nil, probs.InFile(FileName)
	}
	d := &decoder{}
	var m Manifest
	d.decode(doc, reflect.ValueOf(&m).Elem(), "")
	return &m, d.probs.InFile(FileName)
}

// Check parses and validates a manifest. The manifest is nil when it cannot be parsed.
func Check(data []byte, files Files) (*Manifest, problem.List) {
	m, probs := Parse(data)
	if m == nil {
		return nil, probs
	}
	return m, append(probs, m.Validate(files)...)
}

type decoder struct {
	probs   problem.List
	visited int
	stopped bool
}

func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	n = d.resolve(n, path)
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

// resolve follows aliases and charges the node budget; nil means stop.
func (d *decoder) resolve(n *yaml.Node, path string) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	d.visited++
	if d.visited > maxNodes {
		if !d.stopped {
			d.stopped = true
			d.probs.Errorf("manifest.yaml.too_complex", path, "expected at most %d YAML nodes after alias expansion, found more; remove anchors and aliases that repeat large blocks", maxNodes)
		}
		return nil
	}
	return n
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.typeError(n, path, "mapping of fields")
		return
	}
	fields := structFields(v.Type())
	seen := map[string]bool{}
	d.eachPair(n, path, func(key string, val *yaml.Node, keyNode *yaml.Node) {
		if seen[key] {
			d.probs.Errorf("manifest.yaml.duplicate_key", join(path, key), "expected each field once, found %q again at line %d; remove the duplicate", key, keyNode.Line)
			return
		}
		seen[key] = true
		idx, ok := fields[key]
		if !ok {
			d.probs.Warnf("manifest.unknown_field", join(path, key), "expected a field of the Kandev manifest reference, found unknown field %q (line %d); hosts ignore it: remove it or check its spelling", key, keyNode.Line)
			return
		}
		d.decode(val, v.Field(idx), join(path, key))
	})
}

// eachPair calls fn for every key of a mapping, expanding "<<" merge keys in place.
func (d *decoder) eachPair(n *yaml.Node, path string, fn func(key string, val, keyNode *yaml.Node)) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			d.merge(val, path, fn)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.probs.Errorf("manifest.type", path, "expected a plain string key, found %s at line %d; use simple field names", describeNode(k), k.Line)
			continue
		}
		fn(k.Value, val, k)
	}
}

func (d *decoder) merge(val *yaml.Node, path string, fn func(key string, val, keyNode *yaml.Node)) {
	val = d.resolve(val, path)
	if val == nil {
		return
	}
	switch val.Kind {
	case yaml.MappingNode:
		d.eachPair(val, path, fn)
	case yaml.SequenceNode:
		for _, item := range val.Content {
			d.merge(item, path, fn)
		}
	default:
		d.typeError(val, path, "mapping to merge")
	}
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
		d.decodeFreeForm(n, v, path)
		return
	}
	out := reflect.MakeMap(v.Type())
	d.eachPair(n, path, func(key string, val, keyNode *yaml.Node) {
		if out.MapIndex(reflect.ValueOf(key)).IsValid() {
			d.probs.Errorf("manifest.yaml.duplicate_key", join(path, key), "expected each key once, found %q again at line %d; remove the duplicate", key, keyNode.Line)
			return
		}
		elem := reflect.New(v.Type().Elem()).Elem()
		d.decode(val, elem, join(path, key))
		out.SetMapIndex(reflect.ValueOf(key), elem)
	})
	v.Set(out)
}

// decodeFreeForm decodes JSON-Schema-like blocks as yaml.v3 would, so later checks see the
// same values a host sees.
func (d *decoder) decodeFreeForm(n *yaml.Node, v reflect.Value, path string) {
	d.visited += countNodes(n, maxNodes)
	if d.visited > maxNodes {
		d.resolve(n, path)
		return
	}
	m := reflect.New(v.Type())
	if err := n.Decode(m.Interface()); err != nil {
		d.probs.Errorf("manifest.type", path, "expected a mapping with string keys and plain values, found a value that cannot be decoded (%s); fix the block's structure", yamlMessage(err))
		return
	}
	v.Set(m.Elem())
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

// countNodes counts nodes below n (following aliases) up to limit.
func countNodes(n *yaml.Node, limit int) int {
	count := 0
	stack := []*yaml.Node{n}
	for len(stack) > 0 && count <= limit {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		count++
		if cur.Kind == yaml.AliasNode && cur.Alias != nil {
			stack = append(stack, cur.Alias)
		}
		stack = append(stack, cur.Content...)
	}
	return count
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

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
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

package manifest

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// Free-form blocks (config_schema, tool schemas, executor provider blocks) decode to the
// values yaml.v3 gives a host that unmarshals them into map[string]any: mappings with only
// string keys become map[string]any, others map[any]any, lists []any, scalars their resolved
// value. yaml.v3 itself compares every pair of keys of a mapping (quadratic: an 85,000-key
// config_schema took minutes), so the walk is done here, with one hash lookup per key.

// freeStringMap decodes mapping n into a map[string]any, as a map[string]any field is.
func (d *decoder) freeStringMap(n *yaml.Node, path string) map[string]any {
	entries := d.mapping(n, path)
	out := make(map[string]any, len(entries))
	for _, e := range entries {
		if v, ok := d.free(e.valueNode, join(path, e.key)); ok {
			out[e.key] = v
		}
	}
	return out
}

// free decodes any node as an untyped value; ok is false when it cannot be decoded (the
// problem is reported).
func (d *decoder) free(n *yaml.Node, path string) (any, bool) {
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		if isStringMap(n) {
			return d.freeStringMap(n, path), true
		}
		return d.freeAnyMap(n, path)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			if v, ok := d.free(item, fmt.Sprintf("%s[%d]", path, i)); ok {
				out = append(out, v)
			}
		}
		return out, true
	default:
		var v any
		if err := n.Decode(&v); err != nil {
			d.probs.Errorf("manifest.type", path, "expected a plain value, found %s that cannot be decoded (%s) at line %d; fix the value", describeNode(n), yamlMessage(err), n.Line)
			return nil, false
		}
		return v, true
	}
}

// freeAnyMap decodes a mapping with non-string keys (numbers, booleans) as yaml.v3 does.
func (d *decoder) freeAnyMap(n *yaml.Node, path string) (any, bool) {
	entries := d.mapping(n, path)
	out := make(map[any]any, len(entries))
	for _, e := range entries {
		var k any
		if err := e.keyNode.Decode(&k); err != nil {
			d.probs.Errorf("manifest.type", join(path, e.key), "expected a plain key, found %s that cannot be decoded (%s) at line %d; fix the key", describeNode(e.keyNode), yamlMessage(err), e.keyNode.Line)
			continue
		}
		if v, ok := d.free(e.valueNode, join(path, e.key)); ok {
			out[k] = v
		}
	}
	return out, true
}

// isStringMap reports whether every own key of mapping n is a string or a merge key, the
// test yaml.v3 uses to choose map[string]any.
func isStringMap(n *yaml.Node) bool {
	for i := 0; i < len(n.Content); i += 2 {
		k := n.Content[i]
		if tag := k.ShortTag(); tag != "!!str" && tag != "!!merge" {
			return false
		}
	}
	return true
}

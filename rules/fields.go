package rules

import (
	"reflect"
	"sort"
	"strings"

	"github.com/pluginyard/registry/extension"
	"github.com/pluginyard/registry/manifest"
)

// Field is one field of a manifest as its decoder knows it, with the rules that check it.
type Field struct {
	// Path is the field's path: "runtime.executables.<key>", "ui.web_apps[].key".
	Path string
	// Type says what the value is: "string", "list of mappings", "mapping (JSON Schema)".
	Type string
	// Rules are the ids of the rules about this field itself (not about its sub-fields).
	Rules []string
}

// KandevFields lists every field of manifest.yaml, from the decoder's own types.
func KandevFields() []Field {
	return fieldsOf(reflect.TypeFor[manifest.Manifest](), "yaml", "manifest.")
}

// CurupiraFields lists every key of curupira-extension.toml, from the decoder's own types.
func CurupiraFields() []Field {
	return fieldsOf(reflect.TypeFor[extension.Manifest](), "toml", "extension.")
}

func fieldsOf(t reflect.Type, tag, rulePrefix string) []Field {
	var out []Field
	walk(t, tag, "", "", func(path, norm, typ string, children map[string]bool) {
		out = append(out, Field{Path: path, Type: typ, Rules: rulesFor(rulePrefix+norm, children)})
	})
	return out
}

// walk calls visit for every field of struct type t, depth first, in declaration order.
// norm is the path as rule ids spell it (no [] or <key>).
func walk(t reflect.Type, tag, path, norm string, visit func(path, norm, typ string, children map[string]bool)) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get(tag), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		p, n := join(path, name), join(norm, name)
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		inner, suffix := structInside(ft)
		visit(p, n, typeName(ft), childNames(inner, tag))
		if inner != nil {
			walk(inner, tag, p+suffix, n, visit)
		}
	}
}

// structInside returns the struct a field holds (itself, a list's or a map's element)
// and the path suffix that reaches it.
func structInside(t reflect.Type) (reflect.Type, string) {
	switch {
	case t.Kind() == reflect.Struct:
		return t, ""
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		return t.Elem(), "[]"
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Struct:
		return t.Elem(), ".<key>"
	}
	return nil, ""
}

func childNames(t reflect.Type, tag string) map[string]bool {
	out := map[string]bool{}
	if t == nil {
		return out
	}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get(tag), ",")
		out[name] = true
	}
	return out
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Struct:
		return "mapping"
	case reflect.Slice:
		return "list of " + plural(typeName(t.Elem()))
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return "mapping (JSON Schema or free-form)"
		}
		return "mapping of names to " + plural(typeName(t.Elem()))
	case reflect.Interface:
		return "any value"
	}
	return t.Kind().String()
}

func plural(s string) string {
	switch {
	case strings.HasPrefix(s, "list of "), strings.HasPrefix(s, "mapping of"), strings.HasPrefix(s, "mapping ("):
		return s
	case s == "any value":
		return "values"
	}
	return s + "s"
}

// rulesFor returns the rules whose id is id or id.<segment…> where the first segment is
// not a sub-field (those rules belong to the sub-field).
func rulesFor(id string, children map[string]bool) []string {
	var out []string
	for _, r := range table {
		rest, ok := strings.CutPrefix(r.ID, id)
		if !ok || rest != "" && rest[0] != '.' {
			continue
		}
		if first, _, _ := strings.Cut(strings.TrimPrefix(rest, "."), "."); rest != "" && children[first] {
			continue
		}
		out = append(out, r.ID)
	}
	sort.Strings(out)
	return out
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// SectionFields returns the fields a section documents: the Kandev manifest's (without
// the distribution block), the distribution block's, the Curupira manifest's, or none.
func SectionFields(slug string) []Field {
	var out []Field
	switch slug {
	case Kandev, Distribution:
		for _, f := range KandevFields() {
			if strings.HasPrefix(f.Path, "distribution") == (slug == Distribution) {
				out = append(out, f)
			}
		}
	case Curupira:
		out = CurupiraFields()
	}
	return out
}

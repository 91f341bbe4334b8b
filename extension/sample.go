package extension

import (
	"bytes"
	"fmt"
	"net/url"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema checks that raw is a JSON Schema object that compiles, and returns it decoded.
func compileSchema(triggerType string, raw []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("result has no schema member")
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema must be a JSON object describing the automation table, found %s", clip(raw))
	}
	loc := "file:///curupira-conformance/" + url.PathEscape(triggerType) + ".schema.json"
	comp := jsonschema.NewCompiler()
	if err := comp.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	if _, err := comp.Compile(loc); err != nil {
		return nil, fmt.Errorf("schema does not compile: %w", err)
	}
	return obj, nil
}

// sampleTable builds an automation table from a schema: every property's default, and for
// required properties without one the first of examples, const or enum, or a value of the
// declared type. It stands in for the table an author would write.
func sampleTable(schema map[string]any) map[string]any {
	table := map[string]any{}
	props, _ := schema["properties"].(map[string]any)
	required := map[string]bool{}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	for name, p := range props {
		prop, _ := p.(map[string]any)
		if v, ok := prop["default"]; ok {
			table[name] = v
			continue
		}
		if required[name] {
			table[name] = sampleValue(prop)
		}
	}
	return table
}

func sampleValue(prop map[string]any) any {
	if ex, ok := prop["examples"].([]any); ok && len(ex) > 0 {
		return ex[0]
	}
	if v, ok := prop["const"]; ok {
		return v
	}
	if enum, ok := prop["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	typ, _ := prop["type"].(string)
	switch typ {
	case "integer", "number":
		return 1
	case "boolean":
		return false
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	}
	return "example"
}

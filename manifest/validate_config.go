package manifest

import "fmt"

var configTypes = []string{"string", "boolean", "number", "integer"}

// configSchema checks the subset of JSON Schema the host enforces on plugin settings.
// Hosts accept any config_schema at install; a field outside the subset can never be
// saved correctly, so these findings are warnings.
func (c *checker) configSchema() {
	s := c.m.ConfigSchema
	if s == nil {
		return
	}
	if t, ok := s["type"]; ok && t != "object" {
		c.probs.Warnf("manifest.config_schema.type", "config_schema.type", "expected type: object at the root of config_schema, found %v; the settings form cannot render it, set type: object", t)
	}
	props, ok := s["properties"].(map[string]any)
	if !ok && s["properties"] != nil {
		c.probs.Warnf("manifest.config_schema.properties", "config_schema.properties", "expected a mapping of property names to schemas, found %T; list the settings under properties:", s["properties"])
	}
	if len(props) > MaxConfigProperties {
		return // refused by manifest.field.count; one problem, not one per property
	}
	for _, name := range sortedKeys(props) {
		c.configProperty("config_schema.properties."+name, props[name])
	}
	c.configRequired(s, props)
}

func (c *checker) configProperty(path string, raw any) {
	p, ok := raw.(map[string]any)
	if !ok {
		c.probs.Warnf("manifest.config_schema.properties", path, "expected a schema mapping (type, title, ...), found %T; describe the setting as a mapping", raw)
		return
	}
	t, hasType := p["type"]
	if hasType && !contains(configTypes, fmt.Sprint(t)) {
		c.probs.Warnf("manifest.config_schema.type", path+".type", "expected type string, boolean, number or integer, found %v; hosts check only these types, so use one of them", t)
	}
	if p["secret"] == true || p["format"] == "password" {
		if hasType && t != "string" {
			c.probs.Warnf("manifest.config_schema.secret", path+".type", "expected a secret field (secret: true or format: password) to be type string or untyped, found %v; hosts reject every value for it, so make it a string", t)
		}
	}
	if e, ok := p["enum"]; ok {
		if list, isList := e.([]any); !isList || len(list) == 0 {
			c.probs.Warnf("manifest.config_schema.enum", path+".enum", "expected a non-empty list of allowed values, found %v; list the values or remove enum", e)
		}
	}
}

func (c *checker) configRequired(s, props map[string]any) {
	raw, ok := s["required"]
	if !ok || raw == nil {
		return
	}
	list, ok := raw.([]any)
	if !ok {
		c.probs.Warnf("manifest.config_schema.required", "config_schema.required", "expected a list of property names, found %T; write required: [name, ...]", raw)
		return
	}
	declared := "" // computed once: every problem names the same declared properties
	for i, r := range list {
		name, isString := r.(string)
		if _, ok := props[name]; isString && ok {
			continue
		}
		if declared == "" {
			declared = declaredNames(props)
		}
		c.probs.Warnf("manifest.config_schema.required", fmt.Sprintf("config_schema.required[%d]", i), "expected the name of a declared property (%s), found %s; the settings can never be saved, so declare the property or drop it from required", declared, truncate(fmt.Sprint(r), 80))
	}
}

// maxNamesShown bounds the property names a message lists, so a schema with thousands of
// properties gives short messages.
const maxNamesShown = 10

func declaredNames(props map[string]any) string {
	names := sortedKeys(props)
	switch {
	case len(names) == 0:
		return "none declared"
	case len(names) > maxNamesShown:
		return fmt.Sprintf("%v and %d more", names[:maxNamesShown], len(names)-maxNamesShown)
	}
	return fmt.Sprint(names)
}

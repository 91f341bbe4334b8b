package web

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
)

// Setting is one field of a plugin's settings form, from its manifest's config_schema.
type Setting struct {
	Name        string // the property name
	Title       string // the label the host's form shows; "" when it shows Name
	Type        string // string, boolean, number, integer; "" when untyped
	Format      string // e.g. "agent-profile", "password"
	Default     string // the default as JSON, e.g. `"#general"`, `true`; "" when none
	Choices     []string
	Secret      bool // secret: true or format: password — kept in the host's vault, shown masked
	Required    bool
	Description string
}

// settingValueRunes bounds a default or a choice shown in the table.
const settingValueRunes = 120

// MaxSettings bounds the rows SettingsFor returns; it equals manifest.MaxConfigProperties,
// the most a published config_schema may declare, so only releases stored before that
// limit are cut.
const MaxSettings = 256

// SettingsFor lists the properties of a config_schema by name, the required ones first, at
// most MaxSettings of them. A property that is not a mapping is listed with its name only.
func SettingsFor(schema map[string]any) []Setting {
	props, _ := schema["properties"].(map[string]any)
	required := requiredNames(schema["required"])
	out := make([]Setting, 0, len(props))
	for name, raw := range props {
		s := Setting{Name: name, Required: slices.Contains(required, name)}
		if p, ok := raw.(map[string]any); ok {
			fillSetting(&s, p)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Required != out[j].Required {
			return out[i].Required
		}
		return out[i].Name < out[j].Name
	})
	return out[:min(len(out), MaxSettings)]
}

func fillSetting(s *Setting, p map[string]any) {
	s.Title, s.Type, s.Format, s.Description = text(p["title"]), text(p["type"]), text(p["format"]), text(p["description"])
	s.Secret = p["secret"] == true || p["format"] == "password"
	if d, ok := p["default"]; ok {
		s.Default = jsonText(d)
	}
	if list, ok := p["enum"].([]any); ok {
		for _, v := range list {
			s.Choices = append(s.Choices, jsonText(v))
		}
	}
}

func requiredNames(raw any) []string {
	list, _ := raw.([]any)
	var out []string
	for _, r := range list {
		if s, ok := r.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// text is a schema keyword's value when it is a string ("" otherwise: the validator warned).
func text(v any) string {
	s, _ := v.(string)
	return s
}

// jsonText shows a value as JSON, so a string default reads "off" and a boolean true.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil { // YAML maps with non-string keys
		return excerpt(fmt.Sprint(v), settingValueRunes)
	}
	return excerpt(string(b), settingValueRunes)
}

// settingType is the Type column: the type and any format.
func settingType(s Setting) string {
	t := s.Type
	if t == "" {
		t = "any"
	}
	if s.Format != "" {
		t += " (" + s.Format + ")"
	}
	return t
}

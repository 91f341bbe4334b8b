package manifest

import (
	"fmt"
	"unicode/utf8"
)

// Every field that reaches a shared document (index.json, the API, the pages) has a
// length limit and a character rule, enforced at publish, so one manifest cannot bloat the
// index for everyone or smuggle invisible text into it. docs/limits.md lists them; a test
// keeps that page and this table in step.

// Chars is the character rule of a field.
type Chars int

// The character rules. Fields with their own grammar (ids, keys, versions) are OwnGrammar:
// their pattern already refuses anything outside a small ASCII set.
const (
	OwnGrammar Chars = iota
	SingleLine       // no control, bidirectional or invisible format characters
	MultiLine        // as SingleLine, but newlines and tabs are allowed
)

// FieldLimit is the limit of one manifest field. Path names the field as docs/limits.md
// does: "[]" stands for every list entry, "<platform>" for every map key.
type FieldLimit struct {
	Path  string
	Max   int  // longest value
	Runes bool // Max counts characters (Unicode code points), else UTF-8 bytes
	Chars Chars
	// Rule enforces Max when another rule than manifest.field.length owns the length (the
	// host's own limit, checked where the field is); "" means manifest.field.length.
	Rule   string
	values func(*Manifest) []fieldValue
}

// CountLimit bounds how many entries a list field may have.
type CountLimit struct {
	Path   string
	Max    int
	Rule   string // "" means manifest.field.count
	counts func(*Manifest) []fieldCount
}

type fieldValue struct{ path, s string }

type fieldCount struct {
	path string
	n    int
}

// FieldLimits returns the length and character limits of every manifest field that reaches
// a shared document.
func FieldLimits() []FieldLimit { return fieldLimits }

// CountLimits returns the entry limits of the list fields that reach a shared document.
func CountLimits() []CountLimit { return countLimits }

var fieldLimits = []FieldLimit{
	{Path: "id", Max: 64, Chars: OwnGrammar, values: top("id", func(m *Manifest) string { return m.ID })},
	{Path: "version", Max: 64, Chars: OwnGrammar, Rule: "manifest.version.semver", values: top("version", func(m *Manifest) string { return m.Version })},
	{Path: "display_name", Max: 64, Runes: true, Chars: SingleLine, values: top("display_name", func(m *Manifest) string { return m.DisplayName })},
	{Path: "description", Max: 1024, Runes: true, Chars: MultiLine, values: top("description", func(m *Manifest) string { return m.Description })},
	{Path: "author", Max: 128, Runes: true, Chars: SingleLine, values: top("author", func(m *Manifest) string { return m.Author })},
	{Path: "categories[]", Max: 32, Chars: OwnGrammar, values: each("categories", func(m *Manifest) []string { return m.Categories })},
	{Path: "icon", Max: 256, Chars: SingleLine, values: top("icon", func(m *Manifest) string { return m.Icon })},
	{Path: "repo_url", Max: 2048, Chars: SingleLine, values: top("repo_url", func(m *Manifest) string { return m.RepoURL })},
	{Path: "homepage", Max: 2048, Chars: SingleLine, values: top("homepage", func(m *Manifest) string { return m.Homepage })},
	{Path: "license", Max: 128, Chars: SingleLine, values: top("license", func(m *Manifest) string { return m.License })},
	{Path: "min_kandev_version", Max: 30, Chars: OwnGrammar, Rule: "manifest.min_kandev_version.format", values: top("min_kandev_version", func(m *Manifest) string { return m.MinKandevVersion })},
	{Path: "distribution.license", Max: 128, Chars: SingleLine, values: top("distribution.license", func(m *Manifest) string {
		if m.Distribution == nil {
			return ""
		}
		return m.Distribution.License
	})},
	{Path: "runtime.executables.<platform>", Max: 256, Chars: SingleLine, values: executables},
	{Path: "capabilities.events[]", Max: 128, Chars: SingleLine, values: each("capabilities.events", func(m *Manifest) []string { return m.Capabilities.Events })},
	{Path: "capabilities.api_read[]", Max: 64, Chars: SingleLine, values: each("capabilities.api_read", func(m *Manifest) []string { return m.Capabilities.APIRead })},
	{Path: "capabilities.api_write[]", Max: 64, Chars: SingleLine, values: each("capabilities.api_write", func(m *Manifest) []string { return m.Capabilities.APIWrite })},
	{Path: "webhooks[].key", Max: 64, Chars: SingleLine, values: list("webhooks", "key", func(m *Manifest) []Webhook { return m.Webhooks }, func(w Webhook) string { return w.Key })},
	{Path: "webhooks[].description", Max: 1024, Runes: true, Chars: MultiLine, values: list("webhooks", "description", func(m *Manifest) []Webhook { return m.Webhooks }, func(w Webhook) string { return w.Description })},
	{Path: "actions[].key", Max: 64, Chars: OwnGrammar, values: list("actions", "key", func(m *Manifest) []Action { return m.Actions }, func(a Action) string { return a.Key })},
	{Path: "agent_tools[].name", Max: 32, Chars: OwnGrammar, Rule: "manifest.agent_tools.name", values: list("agent_tools", "name", agentTools, func(t AgentTool) string { return t.Name })},
	{Path: "agent_tools[].description", Max: maxToolDescription, Chars: MultiLine, Rule: "manifest.agent_tools.description", values: list("agent_tools", "description", agentTools, func(t AgentTool) string { return t.Description })},
	{Path: "ui.web_apps[].key", Max: 64, Chars: OwnGrammar, Rule: "manifest.ui.web_apps.key", values: list("ui.web_apps", "key", webApps, func(w WebApp) string { return w.Key })},
	{Path: "ui.web_apps[].title", Max: 200, Chars: SingleLine, Rule: "manifest.ui.web_apps.title", values: list("ui.web_apps", "title", webApps, func(w WebApp) string { return w.Title })},
	{Path: "ui.web_apps[].entry", Max: 256, Chars: SingleLine, values: list("ui.web_apps", "entry", webApps, func(w WebApp) string { return w.Entry })},
	{Path: "ui.web_apps[].network_origins[]", Max: 256, Chars: SingleLine, values: origins},
	{Path: "auth_providers[].display_name", Max: 64, Runes: true, Chars: SingleLine, values: list("auth_providers", "display_name", func(m *Manifest) []AuthProvider { return m.AuthProviders }, func(a AuthProvider) string { return a.DisplayName })},
	{Path: "ui.keybindings[].description", Max: 200, Runes: true, Chars: SingleLine, values: list("ui.keybindings", "description", keybindings, func(k Keybinding) string { return k.Description })},
}

var countLimits = []CountLimit{
	{Path: "categories", Max: 10, counts: counted("categories", func(m *Manifest) int { return len(m.Categories) })},
	{Path: "capabilities.events", Max: 64, counts: counted("capabilities.events", func(m *Manifest) int { return len(m.Capabilities.Events) })},
	{Path: "capabilities.api_read", Max: 32, counts: counted("capabilities.api_read", func(m *Manifest) int { return len(m.Capabilities.APIRead) })},
	{Path: "capabilities.api_write", Max: 32, counts: counted("capabilities.api_write", func(m *Manifest) int { return len(m.Capabilities.APIWrite) })},
	{Path: "webhooks", Max: 128, counts: counted("webhooks", func(m *Manifest) int { return len(m.Webhooks) })},
	{Path: "actions", Max: 256, counts: counted("actions", func(m *Manifest) int { return len(m.Actions) })},
	{Path: "agent_tools", Max: maxAgentTools, Rule: "manifest.agent_tools.count", counts: counted("agent_tools", func(m *Manifest) int { return len(m.AgentTools) })},
	{Path: "ui.web_apps", Max: 16, counts: counted("ui.web_apps", func(m *Manifest) int { return len(webApps(m)) })},
	{Path: "config_schema.properties", Max: MaxConfigProperties, counts: counted("config_schema.properties", func(m *Manifest) int { return len(configProperties(m.ConfigSchema)) })},
	{Path: "ui.web_apps[].network_origins", Max: 32, counts: func(m *Manifest) []fieldCount {
		var out []fieldCount
		for i, w := range webApps(m) {
			out = append(out, fieldCount{fmt.Sprintf("ui.web_apps[%d].network_origins", i), len(w.NetworkOrigins)})
		}
		return out
	}},
}

// MaxConfigProperties bounds the settings a plugin declares in config_schema.properties:
// the plugin page lists each one, and the Kandev corpus's largest schema has 17.
const MaxConfigProperties = 256

// configProperties is a config_schema's properties mapping; nil when it has none or it is
// not a mapping (the validator warns).
func configProperties(schema map[string]any) map[string]any {
	props, _ := schema["properties"].(map[string]any)
	return props
}

// fields checks every field against its limits, reporting length and characters separately
// so an author can fix both at once.
func (c *checker) fields() {
	for _, l := range fieldLimits {
		for _, v := range l.values(c.m) {
			c.fieldValue(l, v)
		}
	}
	for _, l := range countLimits {
		if l.Rule != "" {
			continue
		}
		for _, fc := range l.counts(c.m) {
			if fc.n > l.Max {
				c.probs.Errorf("manifest.field.count", fc.path, "expected at most %d entries in %s, found %d; remove some", l.Max, fc.path, fc.n)
			}
		}
	}
}

func (c *checker) fieldValue(l FieldLimit, v fieldValue) {
	if l.Rule == "" {
		if n := l.length(v.s); n > l.Max {
			c.probs.Errorf("manifest.field.length", v.path, "expected %s of at most %d %s, found %d %s; shorten it", v.path, l.Max, l.unit(), n, l.unit())
		}
	}
	if l.Chars == OwnGrammar {
		return
	}
	if msg := TextProblem(v.s, l.Chars == MultiLine); msg != "" {
		c.probs.Errorf("manifest.field.characters", v.path, "expected %s without %s, found %s; remove them", v.path, forbiddenText(l.Chars == MultiLine), msg)
	}
}

func (l FieldLimit) length(s string) int {
	if l.Runes {
		return utf8.RuneCountInString(s)
	}
	return len(s)
}

func (l FieldLimit) unit() string {
	if l.Runes {
		return "characters"
	}
	return "bytes"
}

func counted(path string, n func(*Manifest) int) func(*Manifest) []fieldCount {
	return func(m *Manifest) []fieldCount { return []fieldCount{{path, n(m)}} }
}

func top(path string, get func(*Manifest) string) func(*Manifest) []fieldValue {
	return func(m *Manifest) []fieldValue {
		if s := get(m); s != "" {
			return []fieldValue{{path, s}}
		}
		return nil
	}
}

func each(path string, get func(*Manifest) []string) func(*Manifest) []fieldValue {
	return func(m *Manifest) []fieldValue {
		var out []fieldValue
		for i, s := range get(m) {
			out = append(out, fieldValue{fmt.Sprintf("%s[%d]", path, i), s})
		}
		return out
	}
}

func list[T any](path, field string, items func(*Manifest) []T, get func(T) string) func(*Manifest) []fieldValue {
	return func(m *Manifest) []fieldValue {
		var out []fieldValue
		for i, it := range items(m) {
			if s := get(it); s != "" {
				out = append(out, fieldValue{fmt.Sprintf("%s[%d].%s", path, i, field), s})
			}
		}
		return out
	}
}

func executables(m *Manifest) []fieldValue {
	if m.Runtime == nil {
		return nil
	}
	var out []fieldValue
	for _, k := range sortedKeys(m.Runtime.Executables) {
		out = append(out, fieldValue{"runtime.executables." + k, m.Runtime.Executables[k]})
	}
	return out
}

func origins(m *Manifest) []fieldValue {
	var out []fieldValue
	for i, w := range webApps(m) {
		for j, o := range w.NetworkOrigins {
			out = append(out, fieldValue{fmt.Sprintf("ui.web_apps[%d].network_origins[%d]", i, j), o})
		}
	}
	return out
}

func agentTools(m *Manifest) []AgentTool { return m.AgentTools }

func webApps(m *Manifest) []WebApp {
	if m.UI == nil {
		return nil
	}
	return m.UI.WebApps
}

func keybindings(m *Manifest) []Keybinding {
	if m.UI == nil {
		return nil
	}
	return m.UI.Keybindings
}

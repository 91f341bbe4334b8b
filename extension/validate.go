package extension

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/version"
)

// KnownRuntimes are the runtime values Curupira knows; another value is only a warning.
var knownRuntimes = []string{"node", "python", "go", "binary"}

// launchNeeds maps each known launch type to the [launch] fields it requires.
var launchNeeds = map[string][]string{
	"npx":    {"package", "version"},
	"node":   {"command"},
	"python": {"command"},
	"binary": {"command"},
	"go":     {"package"},
}

// Validate applies every manifest rule and returns all problems (without File; Parse adds it).
func (m *Manifest) Validate() problem.List {
	var l problem.List
	if m.ManifestVersion != 1 {
		l.Errorf("extension.manifest_version", "manifest_version", "manifest_version must be 1, found %d; add `manifest_version = 1`", m.ManifestVersion)
	}
	m.validateName(&l)
	m.validateVersion(&l)
	if m.ProtocolVersion != 2 {
		l.Errorf("extension.protocol_version", "protocol_version", "protocol_version must be 2 (the protocol this registry and Curupira speak), found %d", m.ProtocolVersion)
	}
	m.validateRuntime(&l)
	if m.Kind != "trigger" {
		l.Errorf("extension.kind", "kind", "kind must be \"trigger\" (the only kind), found %q", quoteValue(m.Kind))
	}
	m.validateTriggerTypes(&l)
	m.validateLaunch(&l)
	validateURL(&l, "homepage", m.Homepage)
	validateURL(&l, "repository", m.Repository)
	m.validateFields(&l)
	return l
}

// FieldLimit is the length and character rule of one field that reaches the Curupira index,
// the API or the pages (docs/limits.md lists them). Own names the rule that already bounds
// the field's length and characters (a grammar), in which case only the table documents it.
type FieldLimit struct {
	Path  string
	Max   int
	Runes bool // Max counts characters, else bytes
	Multi bool // newlines and tabs allowed
	Own   string
	value func(*Manifest) []string
}

// CountLimit bounds the entries of a list that reaches the Curupira index.
type CountLimit struct {
	Path  string
	Max   int
	count func(*Manifest) int
}

// FieldLimits returns the limits of every field that reaches a shared document.
func FieldLimits() []FieldLimit { return fieldLimits }

// CountLimits returns the limits of the lists that reach a shared document.
func CountLimits() []CountLimit { return countLimits }

var fieldLimits = []FieldLimit{
	{Path: "name", Max: 214, Own: "extension.name.format", value: one(func(m *Manifest) string { return m.Name })},
	{Path: "version", Max: version.MaxLen, Own: "extension.version.semver", value: one(func(m *Manifest) string { return m.Version })},
	{Path: "description", Max: 1024, Runes: true, Multi: true, value: one(func(m *Manifest) string { return m.Description })},
	{Path: "runtime", Max: 32, value: one(func(m *Manifest) string { return m.Runtime })},
	{Path: "trigger_types[]", Max: 64, Own: "extension.trigger_types.format", value: func(m *Manifest) []string { return m.TriggerTypes }},
	{Path: "homepage", Max: 2048, value: one(func(m *Manifest) string { return m.Homepage })},
	{Path: "repository", Max: 2048, value: one(func(m *Manifest) string { return m.Repository })},
	{Path: "license", Max: 128, value: one(func(m *Manifest) string { return m.License })},
	{Path: "launch.package", Max: 214, value: one(func(m *Manifest) string { return m.Launch.Package })},
	{Path: "launch.version", Max: version.MaxLen, value: one(func(m *Manifest) string { return m.Launch.Version })},
	{Path: "launch.command", Max: 256, value: one(func(m *Manifest) string { return m.Launch.Command })},
	{Path: "launch.args[]", Max: 256, value: func(m *Manifest) []string { return m.Launch.Args }},
}

var countLimits = []CountLimit{
	{"trigger_types", 32, func(m *Manifest) int { return len(m.TriggerTypes) }},
	{"launch.args", 32, func(m *Manifest) int { return len(m.Launch.Args) }},
}

func one(get func(*Manifest) string) func(*Manifest) []string {
	return func(m *Manifest) []string {
		if s := get(m); s != "" {
			return []string{s}
		}
		return nil
	}
}

// validateFields applies the length, character and count limits.
func (m *Manifest) validateFields(l *problem.List) {
	for _, f := range fieldLimits {
		if f.Own != "" {
			continue
		}
		for i, v := range f.value(m) {
			path := strings.Replace(f.Path, "[]", fmt.Sprintf("[%d]", i), 1)
			f.check(l, path, v)
		}
	}
	for _, c := range countLimits {
		if n := c.count(m); n > c.Max {
			l.Errorf("extension.field.count", c.Path, "%s has %d entries; at most %d are allowed; remove some", c.Path, n, c.Max)
		}
	}
}

func (f FieldLimit) check(l *problem.List, path, v string) {
	n, unit := len(v), "bytes"
	if f.Runes {
		n, unit = utf8.RuneCountInString(v), "characters"
	}
	if n > f.Max {
		l.Errorf("extension.field.length", path, "%s is %d %s long; at most %d %s are allowed; shorten it", path, n, unit, f.Max, unit)
	}
	if msg := manifest.TextProblem(v, f.Multi); msg != "" {
		allowed := "no control characters (newlines included), bidirectional controls or invisible format characters"
		if f.Multi {
			allowed = "no control characters other than newline and tab, no bidirectional controls or invisible format characters"
		}
		l.Errorf("extension.field.characters", path, "%s holds %s; %s are allowed; remove them", path, msg, allowed)
	}
}

// quoteValue shortens a value quoted in a message, at a rune boundary.
func quoteValue(s string) string {
	const n = 80
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func (m *Manifest) validateName(l *problem.List) {
	if m.Name == "" {
		l.Errorf("extension.name", "name", "name is required: the npm-style package name, e.g. \"acme-curupira-ext\" or \"@acme/curupira-ext\"")
		return
	}
	if why := npmNameProblem(m.Name); why != "" {
		l.Errorf("extension.name.format", "name", "name %q is not an npm-style package name: %s", quoteValue(m.Name), why)
	}
}

func (m *Manifest) validateVersion(l *problem.List) {
	if m.Version == "" {
		l.Errorf("extension.version", "version", "version is required: a SemVer 2.0.0 version such as \"1.2.0\"")
		return
	}
	if _, err := version.Parse(m.Version); err != nil {
		l.Errorf("extension.version.semver", "version", "version %q is not SemVer 2.0.0 without build metadata (MAJOR.MINOR.PATCH[-PRERELEASE], at most %d bytes): %s; %s", quoteValue(m.Version), version.MaxLen, err, manifest.NearestVersionFix(m.Version))
	}
}

func (m *Manifest) validateRuntime(l *problem.List) {
	switch {
	case m.Runtime == "":
		l.Errorf("extension.runtime", "runtime", "runtime is required: one of %s", strings.Join(knownRuntimes, ", "))
	case !slices.Contains(knownRuntimes, m.Runtime):
		l.Warnf("extension.runtime.unknown", "runtime", "runtime %q is not one Curupira knows (%s); hosts may not be able to run it", quoteValue(m.Runtime), strings.Join(knownRuntimes, ", "))
	}
}

func (m *Manifest) validateTriggerTypes(l *problem.List) {
	if len(m.TriggerTypes) == 0 {
		l.Errorf("extension.trigger_types", "trigger_types", "trigger_types must list at least one trigger type, e.g. trigger_types = [\"github-issue\"]")
		return
	}
	seen := map[string]bool{}
	for i, t := range m.TriggerTypes {
		path := fmt.Sprintf("trigger_types[%d]", i)
		if !isIdentifier(t) {
			l.Errorf("extension.trigger_types.format", path, "trigger type %q must start with a letter and hold only letters, digits, '-' and '_' (at most 64 characters)", quoteValue(t))
		}
		if seen[t] {
			l.Errorf("extension.trigger_types.duplicate", path, "trigger type %q is listed more than once; remove the duplicate", quoteValue(t))
		}
		seen[t] = true
	}
}

func (m *Manifest) validateLaunch(l *problem.List) {
	if m.Launch.isZero() {
		l.Errorf("extension.launch", "launch", "a [launch] table is required, e.g. [launch] type = \"npx\", package = \"@acme/ext\", version = \"1.2.0\"")
		return
	}
	lt := m.Launch
	needs, known := launchNeeds[lt.Type]
	switch {
	case lt.Type == "":
		l.Errorf("extension.launch.type", "launch.type", "launch.type is required: one of npx, node, python, binary, go")
		return
	case !known:
		l.Errorf("extension.launch.type", "launch.type", "launch.type %q is unknown; use one of npx, node, python, binary, go", quoteValue(lt.Type))
		return
	}
	for _, field := range needs {
		if launchField(lt, field) == "" {
			l.Errorf("extension.launch."+field, "launch."+field, "launch.%s is required when launch.type is %q", field, quoteValue(lt.Type))
		}
	}
	m.validateLaunchValues(l)
}

func (m *Manifest) validateLaunchValues(l *problem.List) {
	lt := m.Launch
	if lt.Type == "npx" && lt.Package != "" {
		if why := npmNameProblem(lt.Package); why != "" {
			l.Errorf("extension.launch.package", "launch.package", "launch.package %q is not an npm package name: %s", quoteValue(lt.Package), why)
		}
	}
	if lt.Version == "" || m.Version == "" {
		return
	}
	if strings.TrimPrefix(lt.Version, "v") != m.Version {
		l.Warnf("extension.launch.version.mismatch", "launch.version", "launch.version %q differs from version %q; the host would start another release than the one listed", quoteValue(lt.Version), quoteValue(m.Version))
	}
}

func launchField(lt Launch, field string) string {
	switch field {
	case "package":
		return lt.Package
	case "version":
		return lt.Version
	case "command":
		return lt.Command
	}
	return ""
}

func validateURL(l *problem.List, field, v string) {
	if v == "" {
		return
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		l.Errorf("extension."+field+".url", field, "%s %q must be an absolute http(s) URL", field, quoteValue(v))
	}
}

// isZero reports whether the [launch] table is missing or empty.
func (lt Launch) isZero() bool {
	return lt.Type == "" && lt.Package == "" && lt.Version == "" && lt.Command == "" && len(lt.Args) == 0
}

package extension

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/pluginyard/registry/problem"
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
		l.Errorf("extension.kind", "kind", "kind must be \"trigger\" (the only kind), found %q", m.Kind)
	}
	m.validateTriggerTypes(&l)
	m.validateLaunch(&l)
	validateURL(&l, "homepage", m.Homepage)
	validateURL(&l, "repository", m.Repository)
	return l
}

func (m *Manifest) validateName(l *problem.List) {
	if m.Name == "" {
		l.Errorf("extension.name", "name", "name is required: the npm-style package name, e.g. \"acme-curupira-ext\" or \"@acme/curupira-ext\"")
		return
	}
	if why := npmNameProblem(m.Name); why != "" {
		l.Errorf("extension.name.format", "name", "name %q is not an npm-style package name: %s", m.Name, why)
	}
}

func (m *Manifest) validateVersion(l *problem.List) {
	if m.Version == "" {
		l.Errorf("extension.version", "version", "version is required: a SemVer 2.0.0 version such as \"1.2.0\"")
		return
	}
	if why := semverProblem(m.Version); why != "" {
		l.Errorf("extension.version.semver", "version", "version %q is not SemVer 2.0.0: %s; use MAJOR.MINOR.PATCH such as \"1.2.0\"", m.Version, why)
	}
}

func (m *Manifest) validateRuntime(l *problem.List) {
	switch {
	case m.Runtime == "":
		l.Errorf("extension.runtime", "runtime", "runtime is required: one of %s", strings.Join(knownRuntimes, ", "))
	case !slices.Contains(knownRuntimes, m.Runtime):
		l.Warnf("extension.runtime.unknown", "runtime", "runtime %q is not one Curupira knows (%s); hosts may not be able to run it", m.Runtime, strings.Join(knownRuntimes, ", "))
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
			l.Errorf("extension.trigger_types.format", path, "trigger type %q must start with a letter and hold only letters, digits, '-' and '_' (at most 64 characters)", t)
		}
		if seen[t] {
			l.Errorf("extension.trigger_types.duplicate", path, "trigger type %q is listed more than once; remove the duplicate", t)
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
		l.Errorf("extension.launch.type", "launch.type", "launch.type %q is unknown; use one of npx, node, python, binary, go", lt.Type)
		return
	}
	for _, field := range needs {
		if launchField(lt, field) == "" {
			l.Errorf("extension.launch."+field, "launch."+field, "launch.%s is required when launch.type is %q", field, lt.Type)
		}
	}
	m.validateLaunchValues(l)
}

func (m *Manifest) validateLaunchValues(l *problem.List) {
	lt := m.Launch
	if lt.Type == "npx" && lt.Package != "" {
		if why := npmNameProblem(lt.Package); why != "" {
			l.Errorf("extension.launch.package", "launch.package", "launch.package %q is not an npm package name: %s", lt.Package, why)
		}
	}
	if lt.Version == "" || m.Version == "" {
		return
	}
	if strings.TrimPrefix(lt.Version, "v") != m.Version {
		l.Warnf("extension.launch.version.mismatch", "launch.version", "launch.version %q differs from version %q; the host would start another release than the one listed", lt.Version, m.Version)
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
		l.Errorf("extension."+field+".url", field, "%s %q must be an absolute http(s) URL", field, v)
	}
}

// isZero reports whether the [launch] table is missing or empty.
func (lt Launch) isZero() bool {
	return lt.Type == "" && lt.Package == "" && lt.Version == "" && lt.Command == "" && len(lt.Args) == 0
}

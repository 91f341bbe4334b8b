package manifest

import (
	"path"
	"sort"
	"strings"
)

// knownPlatforms is the goos/goarch set of the Go toolchain (`go tool dist list`), written
// with a dash as runtime.executables keys use it.
var knownPlatforms = map[string]bool{}

func init() {
	for _, p := range strings.Fields(`aix-ppc64 android-386 android-amd64 android-arm android-arm64
		darwin-amd64 darwin-arm64 dragonfly-amd64 freebsd-386 freebsd-amd64 freebsd-arm freebsd-arm64
		illumos-amd64 ios-amd64 ios-arm64 js-wasm linux-386 linux-amd64 linux-arm linux-arm64
		linux-loong64 linux-mips linux-mips64 linux-mips64le linux-mipsle linux-ppc64 linux-ppc64le
		linux-riscv64 linux-s390x netbsd-386 netbsd-amd64 netbsd-arm netbsd-arm64 openbsd-386
		openbsd-amd64 openbsd-arm openbsd-arm64 openbsd-ppc64 openbsd-riscv64 plan9-386 plan9-amd64
		plan9-arm solaris-amd64 wasip1-wasm windows-386 windows-amd64 windows-arm64`) {
		knownPlatforms[p] = true
	}
}

// KnownPlatform reports whether p is a <goos>-<goarch> of the Go toolchain, as
// runtime.executables keys and hosts name platforms.
func KnownPlatform(p string) bool { return knownPlatforms[p] }

func (c *checker) runtime() {
	r := c.m.Runtime
	if r != nil && r.Type != "" && r.Type != "binary" {
		c.probs.Errorf("manifest.runtime.type", "runtime.type", "expected runtime.type \"binary\" (the only supported value), found %q; set type: binary", r.Type)
	}
	if c.m.IsManaged() {
		c.managedRuntime()
		return
	}
	c.unmanaged()
}

func (c *checker) managedRuntime() {
	if c.m.BaseURL != "" {
		c.probs.Errorf("manifest.runtime.base_url", "base_url", "expected no base_url on a runtime-managed plugin (runtime.type: binary), found %q; remove base_url", c.m.BaseURL)
	}
	if c.m.Endpoints != nil {
		c.probs.Errorf("manifest.runtime.endpoints", "endpoints", "expected no endpoints block on a runtime-managed plugin (runtime.type: binary), found one; remove endpoints")
	}
	exes := c.m.Runtime.Executables
	if len(exes) == 0 {
		c.probs.Errorf("manifest.runtime.executables.required", "runtime.executables", "expected at least one executable keyed <goos>-<goarch> (e.g. linux-amd64: server/plugin-linux-amd64), found none; add the executables you ship")
		return
	}
	for _, k := range sortedKeys(exes) {
		c.executable(k, exes[k])
	}
}

func (c *checker) executable(key, value string) {
	p := "runtime.executables." + key
	if !knownPlatforms[key] {
		c.probs.Errorf("manifest.runtime.executables.platform", p, "expected a <goos>-<goarch> key such as linux-amd64 or darwin-arm64, found %q; no host matches it, so replace it with a real platform (an unfilled template placeholder must be substituted before packaging)", key)
	}
	if msg := executablePathProblem(value); msg != "" {
		c.probs.Errorf("manifest.runtime.executables.path", p, "expected a clean package-relative path under server/, found %q (%s); use e.g. server/plugin-%s", value, msg, key)
		return
	}
	if strings.HasPrefix(key, "windows-") && !strings.HasSuffix(value, ".exe") {
		c.probs.Errorf("manifest.runtime.executables.exe", p, "expected a Windows executable ending in .exe, found %q; rename it to %s.exe", value, value)
	}
	if c.files != nil {
		if _, ok := c.files[value]; !ok {
			c.probs.Errorf("manifest.runtime.executables.missing", p, "expected the package to contain %q, found no such file; the package cannot install on %s, so build it into the package or remove the entry", value, key)
		}
	}
}

// executablePathProblem says what is wrong with an executable path, or "" when it is fine.
func executablePathProblem(p string) string {
	switch {
	case p == "":
		return "empty"
	case strings.Contains(p, `\`):
		return "backslash"
	case path.IsAbs(p):
		return "absolute"
	case path.Clean(p) != p:
		return "not clean"
	case p == ".." || strings.HasPrefix(p, "../"):
		return "outside the package"
	case !strings.HasPrefix(p, "server/"):
		return "not under server/"
	}
	return ""
}

// unmanaged checks a manifest without runtime.type binary: hosts install it only as a
// static web-app package. A canvas's extra contributions are reported by distribution.
func (c *checker) unmanaged() {
	m := c.m
	if m.Runtime != nil && m.Runtime.Type != "" {
		return // an unsupported runtime.type is already reported
	}
	if !m.HasWebApps() || m.BaseURL != "" || m.Endpoints != nil {
		c.probs.Errorf("manifest.runtime.required", "runtime", "expected runtime.type: binary with executables, or a static web-app-only package (ui.web_apps and no base_url/endpoints); found neither, so hosts refuse to install it: add a runtime block")
		return
	}
	if extra := backendContributions(m); len(extra) > 0 && m.Distribution == nil {
		c.probs.Errorf("manifest.runtime.static_only", "runtime", "expected a package without runtime.type: binary to be a static web app only, found %s; add a runtime block or remove them", strings.Join(extra, ", "))
	}
}

// backendContributions lists declared fields that need a managed backend or native UI.
func backendContributions(m *Manifest) []string {
	var out []string
	add := func(cond bool, name string) {
		if cond {
			out = append(out, name)
		}
	}
	add(len(m.Webhooks) > 0, "webhooks")
	add(len(m.Actions) > 0, "actions")
	add(len(m.RepositoryProviders) > 0, "repository_providers")
	add(len(m.ReferenceSources) > 0, "reference_sources")
	add(len(m.AuthProviders) > 0, "auth_providers")
	add(len(m.AutomationConditions) > 0, "automation_conditions")
	add(len(m.ExecutorProviders) > 0, "executor_providers")
	add(len(m.Tools) > 0, "tools")
	if m.UI != nil {
		add(m.UI.Bundle != "", "ui.bundle")
		add(len(m.UI.Styles) > 0, "ui.styles")
		add(len(m.UI.Pages) > 0, "ui.pages")
		add(len(m.UI.Keybindings) > 0, "ui.keybindings")
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

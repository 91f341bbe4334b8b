// Package rules is the table of every rule the registry's validators report: the manifest,
// canvas distribution block, Curupira manifest, plugins.yaml, package, signature, publish
// and index rules. The reference documentation (`registry docs`, /docs/reference) is
// rendered from it, every reported problem links into it, and its tests tie it to the rule
// ids the validators emit, so a rule cannot be added, renamed or removed without its entry.
package rules

import (
	"sort"
	"strings"

	"github.com/pluginyard/registry/problem"
)

// Rule documents one rule id.
type Rule struct {
	// ID is the stable rule id a problem carries (problem.Problem.Rule).
	ID string
	// Section is the slug of the Section the rule belongs to.
	Section string
	// Severity is how the validator reports it: Error refuses the package.
	Severity problem.Severity
	// Checks says in one sentence what the rule checks.
	Checks string
	// Why says in one sentence why hosts (or the registry) care.
	Why string
	// Bad is a short example that breaks the rule; Good is it fixed.
	Bad, Good string
	// Lang is the syntax of Bad and Good for code fences: yaml, toml, text or shell.
	Lang string
}

// Section is one page of the reference.
type Section struct {
	// Slug names the page: /docs/reference/<slug>, docs/reference/<slug>.md.
	Slug string
	// Title is the page heading; Intro a paragraph under it.
	Title, Intro string
}

// The section slugs, in the order the reference lists them.
const (
	Kandev       = "kandev-manifest"
	Distribution = "canvas-distribution"
	Curupira     = "curupira-manifest"
	List         = "plugins-yaml"
	Package      = "package"
	Signature    = "signature"
	Publish      = "publish"
	Sync         = "sync"
	Index        = "index"
	HostAware    = "host-aware"
	Reports      = "reports"
	Webhooks     = "webhooks"
)

// DocsPath is the path under which the reference is served and written.
const DocsPath = "/docs/reference"

var sections = []Section{
	{Kandev, "Kandev plugin manifest (manifest.yaml)", "Every rule the registry checks in a Kandev plugin's or canvas's `manifest.yaml`, at the package root. The same rules run in `registry verify`, `registry pack` and on publish; errors refuse the package, warnings are listed but allowed."},
	{Distribution, "Canvas distribution block (distribution:)", "A canvas is a static web app shipped with a `distribution:` block in its `manifest.yaml` (`schema_version: 1`, `kind: canvas`, `license`, `source_mode`). These rules apply only to packages that carry the block."},
	{Curupira, "Curupira extension manifest (curupira-extension.toml)", "Every rule the registry checks in a Curupira trigger extension's `curupira-extension.toml`, at the package root or under `package/`."},
	{List, "Registry list (plugins.yaml)", "Rules of the curated list that decides what may be published and by whom. `registry lint plugins.yaml` runs them; a reload with a broken list keeps the previous one."},
	{Package, "Package archive and checksums.txt", "Rules of the `.tar.gz` package itself: safe unpacking, entry types, paths, size limits, `checksums.txt`, and the file name."},
	{Signature, "Signatures and signer identity", "Rules of `checksums.txt.sig` (ed25519) and Sigstore bundles, checked on publish against the signing policy of the plugin's `plugins.yaml` entry."},
	{Publish, "Publishing", "Rules the publish endpoint (`POST /api/v1/packages`) and the GitHub OIDC token exchange apply before and after the package checks."},
	{Sync, "GitHub release sync", "Why the sync of a listed repository's latest GitHub release did not publish it; shown in the sync status (`GET /api/v1/admin/sync`) and the log."},
	{Index, "Index documents (index.json)", "Rules the registry checks on the index documents it builds for hosts (`/index.json`, `/curupira/index.json`) before it serves them; a publish that would break them is refused."},
	{HostAware, "Host-aware index and curated compatibility", "Rules of the host-aware index (`/kandev/{host_version}/{platform}/index.json`), its compatibility and upgrade answers, the host capability table (`--host-caps`) and curated compatibility (`registry compat`, `POST /api/v1/admin/compat/…`). See docs/host-aware.md."},
	{Reports, "Reports", "Rules of filing a report of a package (its page's form, `POST /api/v1/plugins/{id}/reports`) and of resolving one (`registry reports resolve`, `POST /api/v1/admin/reports/{report}/resolve`). See docs/reports.md."},
	{Webhooks, "Webhooks (webhooks.yaml)", "Rules of the webhooks file (`registry serve --webhooks webhooks.yaml`): the server does not start with any broken, and names each problem's line and column. See docs/webhooks.md."},
}

// Sections returns the reference's sections in order.
func Sections() []Section { return append([]Section(nil), sections...) }

// SectionOf returns the section with the given slug.
func SectionOf(slug string) (Section, bool) {
	for _, s := range sections {
		if s.Slug == slug {
			return s, true
		}
	}
	return Section{}, false
}

var byID = func() map[string]Rule {
	m := make(map[string]Rule, len(table))
	for _, r := range table {
		if r.Bad == "" {
			r.Bad = fixtureBad[r.ID]
		}
		if r.Lang == "" {
			r.Lang = defaultLang(r.Section)
		}
		m[r.ID] = r
	}
	return m
}()

func defaultLang(section string) string {
	switch section {
	case Kandev, Distribution, List:
		return "yaml"
	case Curupira:
		return "toml"
	}
	return "text"
}

// All returns every rule, by section order then id.
func All() []Rule {
	out := make([]Rule, 0, len(byID))
	for _, r := range byID {
		out = append(out, r)
	}
	order := map[string]int{}
	for i, s := range sections {
		order[s.Slug] = i
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Section != out[j].Section {
			return order[out[i].Section] < order[out[j].Section]
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// InSection returns the rules of one section, by id.
func InSection(slug string) []Rule {
	var out []Rule
	for _, r := range All() {
		if r.Section == slug {
			out = append(out, r)
		}
	}
	return out
}

// Lookup returns the rule with the given id.
func Lookup(id string) (Rule, bool) {
	r, ok := byID[id]
	return r, ok
}

// DocPath returns the path of a rule's entry, /docs/reference/<section>#<id>, or "" for
// an id the table does not know.
func DocPath(id string) string {
	r, ok := byID[id]
	if !ok {
		return ""
	}
	return DocsPath + "/" + r.Section + "#" + r.ID
}

// Linker returns a function giving a rule's documentation URL on the registry at base
// (e.g. https://plugins.example.com); with base "" the URL is the path alone.
func Linker(base string) func(rule string) string {
	base = strings.TrimRight(base, "/")
	return func(rule string) string {
		p := DocPath(rule)
		if p == "" {
			return ""
		}
		return base + p
	}
}

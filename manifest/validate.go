package manifest

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/version"
)

var (
	idPattern                = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	referenceIdentityPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._:-]{0,127}$`)
)

var knownCategories = []string{"connector", "automation", "tools", "analytics", "canvas"}

// checker collects the problems of one Validate call.
type checker struct {
	m     *Manifest
	files Files
	probs problem.List
}

// Validate applies every rule of the Kandev manifest reference and reports all problems at
// once. files is the package's file list; nil skips the checks that need package content
// (icon, executables, UI paths, README/LICENSE and distribution/source rules).
func (m *Manifest) Validate(files Files) problem.List {
	c := &checker{m: m, files: files}
	for _, check := range []func(){
		c.identity, c.version, c.fields, c.categories, c.icon, c.repoURL,
		c.runtime, c.minKandevVersion, c.capabilities,
		c.webhooks, c.actions, c.repositoryProviders, c.referenceSources, c.authProviders,
		c.configSchema, c.agentTools, c.ui, c.automationConditions, c.executorProviders,
		c.legacyTools, c.distribution,
	} {
		check()
	}
	return bounded(c.probs).InFile(FileName)
}

func (c *checker) identity() {
	id := c.m.ID
	switch {
	case id == "":
		c.probs.Errorf("manifest.id.required", "id", "expected a plugin id, found none; add e.g. id: \"acme-plugin\"")
	case !idPattern.MatchString(id):
		c.probs.Errorf("manifest.id.pattern", "id", "expected an id matching %s (lowercase letters, digits, '.', '_', '-', starting with a letter or digit), found %q; rename the plugin", idPattern, id)
	case strings.HasSuffix(id, ".config"):
		c.probs.Errorf("manifest.id.config_suffix", "id", "expected an id not ending in \".config\" (it collides with the host's config files), found %q; rename the plugin", id)
	}
	if v := c.m.APIVersion; v != LegacyAPIVersion && v != CurrentAPIVersion {
		found := fmt.Sprint(v)
		if v == 0 {
			found = "none (or 0)"
		}
		c.probs.Errorf("manifest.api_version.value", "api_version", "expected api_version 1 or 2, found %s; set api_version: 2 for new packages", found)
	}
}

func (c *checker) version() {
	v := c.m.Version
	if v == "" {
		c.probs.Errorf("manifest.version.required", "version", "expected a version such as \"1.0.0\", found none; add version:")
		return
	}
	if _, err := version.Parse(v); err != nil {
		c.probs.Errorf("manifest.version.semver", "version", "expected a SemVer 2.0.0 version (MAJOR.MINOR.PATCH[-PRERELEASE], at most %d bytes, no leading \"v\", no build metadata), found %q (%s); %s", version.MaxLen, truncate(v, 80), err, NearestVersionFix(v))
	}
}

// NearestVersionFix is the fix for an invalid version: the nearest valid one when there is
// one, quoted.
func NearestVersionFix(v string) string {
	if n := version.Nearest(v); n != "" {
		return fmt.Sprintf("use %q", n)
	}
	return "use MAJOR.MINOR.PATCH such as \"1.0.0\""
}

func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f'
}

func (c *checker) categories() {
	for i, cat := range c.m.Categories {
		if !contains(knownCategories, cat) {
			c.probs.Errorf("manifest.categories.unknown", fmt.Sprintf("categories[%d]", i), "expected one of %s, found %q; hosts reject unknown categories, pick the closest listed one", strings.Join(knownCategories, ", "), cat)
		}
	}
}

func (c *checker) repoURL() {
	raw := strings.TrimSpace(c.m.RepoURL)
	if raw == "" {
		return
	}
	lower := strings.ToLower(raw)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
		c.probs.Errorf("manifest.repo_url.scheme", "repo_url", "expected an absolute http(s) URL, found %q; hosts reject other schemes, use e.g. https://github.com/owner/repo", raw)
		return
	}
	if u, err := url.Parse(raw); err != nil || u.Host == "" {
		c.probs.Warnf("manifest.repo_url.host", "repo_url", "expected an absolute URL with a host, found %q; the Repo link will not work, use e.g. https://github.com/owner/repo", raw)
	}
}

func (c *checker) repositoryProviders() {
	seen := map[string]bool{}
	for i, p := range c.m.RepositoryProviders {
		path := fmt.Sprintf("repository_providers[%d]", i)
		if !idPattern.MatchString(p) {
			c.probs.Errorf("manifest.repository_providers.id", path, "expected a lowercase provider id matching %s, found %q; rename the provider", idPattern, p)
			continue
		}
		if seen[p] {
			c.probs.Errorf("manifest.repository_providers.duplicate", path, "expected each provider once, found %q again; remove the duplicate", p)
		}
		seen[p] = true
	}
}

func (c *checker) referenceSources() {
	sources, pairs := map[string]bool{}, map[string]bool{}
	for i, s := range c.m.ReferenceSources {
		path := fmt.Sprintf("reference_sources[%d]", i)
		if c.referenceSourceFields(path, s) {
			continue
		}
		pair := s.Provider + "/" + s.Kind
		switch {
		case sources[s.Source]:
			c.probs.Errorf("manifest.reference_sources.duplicate", path+".source", "expected a unique source, found %q again; rename or remove it", s.Source)
		case pairs[pair]:
			c.probs.Errorf("manifest.reference_sources.duplicate", path+".kind", "expected one source per provider and kind, found %q twice; merge the sources", pair)
		}
		sources[s.Source], pairs[pair] = true, true
	}
}

// referenceSourceFields reports whether the entry had a field problem.
func (c *checker) referenceSourceFields(path string, s ReferenceSource) bool {
	bad := false
	for _, f := range []struct{ name, value string }{{"source", s.Source}, {"provider", s.Provider}, {"kind", s.Kind}} {
		if f.value == "" {
			c.probs.Errorf("manifest.reference_sources.required", path+"."+f.name, "expected a %s, found none; add it", f.name)
			bad = true
		} else if !referenceIdentityPattern.MatchString(f.value) {
			c.probs.Errorf("manifest.reference_sources.identity", path+"."+f.name, "expected a lowercase identifier matching %s, found %q; rename it", referenceIdentityPattern, f.value)
			bad = true
		}
	}
	for _, f := range []struct{ name, value string }{{"display_name", s.DisplayName}, {"kind_label", s.KindLabel}} {
		if f.value == "" {
			c.probs.Errorf("manifest.reference_sources.required", path+"."+f.name, "expected a %s, found none; add a short label", f.name)
			bad = true
		} else if strings.TrimSpace(f.value) != f.value || !utf8.ValidString(f.value) || utf8.RuneCountInString(f.value) > 100 {
			c.probs.Errorf("manifest.reference_sources.label", path+"."+f.name, "expected a trimmed label of at most 100 characters, found %q; shorten or trim it", truncate(f.value, 120))
			bad = true
		}
	}
	return bad
}

func (c *checker) authProviders() {
	if len(c.m.AuthProviders) > 0 && !c.m.Capabilities.Auth {
		c.probs.Warnf("manifest.auth_providers.capability", "auth_providers", "expected capabilities.auth: true alongside auth_providers, found it unset; hosts ignore the login buttons at run time, so add auth: true under capabilities or remove auth_providers")
	}
	hooks := map[string]bool{}
	for _, w := range c.m.Webhooks {
		hooks[w.Key] = true
	}
	ids := map[string]bool{}
	for i, p := range c.m.AuthProviders {
		path := fmt.Sprintf("auth_providers[%d]", i)
		c.authProvider(path, p, hooks, ids)
	}
}

func (c *checker) authProvider(path string, p AuthProvider, hooks, ids map[string]bool) {
	if p.ID == "" {
		c.probs.Warnf("manifest.auth_providers.required", path+".id", "expected a provider id, found none; add id: e.g. \"google\"")
	} else if ids[p.ID] {
		c.probs.Warnf("manifest.auth_providers.duplicate", path+".id", "expected unique provider ids, found %q again; remove the duplicate", p.ID)
	}
	ids[p.ID] = true
	if strings.TrimSpace(p.DisplayName) == "" {
		c.probs.Warnf("manifest.auth_providers.required", path+".display_name", "expected a button label, found none; add display_name:")
	}
	if !hooks[p.Initiate] {
		c.probs.Warnf("manifest.auth_providers.initiate", path+".initiate", "expected the key of one of this manifest's webhooks, found %q; the login button would lead nowhere, so declare that webhook or fix the key", p.Initiate)
	}
}

func (c *checker) executorProviders() {
	if len(c.m.ExecutorProviders) > 0 && !c.m.Capabilities.ExecutorProvider {
		c.probs.Warnf("manifest.executor_providers.capability", "executor_providers", "expected capabilities.executor_provider: true alongside executor_providers, found it unset; add it so hosts that support executor providers enable them")
	}
	seen := map[string]bool{}
	for i, p := range c.m.ExecutorProviders {
		path := fmt.Sprintf("executor_providers[%d].key", i)
		if !idPattern.MatchString(p.Key) || seen[p.Key] {
			c.probs.Warnf("manifest.executor_providers.key", path, "expected a unique lowercase key matching %s, found %q; fix the key", idPattern, p.Key)
		}
		seen[p.Key] = true
	}
}

func (c *checker) legacyTools() {
	if len(c.m.Tools) > 0 {
		c.probs.Warnf("manifest.tools.legacy", "tools", "expected agent_tools (with surfaces and input_schema), found the old top-level tools block; current hosts ignore it, so move the tools to agent_tools")
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

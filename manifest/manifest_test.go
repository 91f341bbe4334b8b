package manifest_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/problem"
)

const (
	validDir   = "../testdata/manifest/valid"
	invalidDir = "../testdata/manifest/invalid"
	corpusDir  = "../testdata/corpus/kandev-manifests"
)

// warningRules are the rules reported as warnings; every other rule is an error. A host
// accepts a package with these findings but the feature cannot work (issue 3, point 4).
var warningRules = map[string]bool{
	"manifest.unknown_field":                  true,
	"manifest.repo_url.host":                  true,
	"manifest.icon.path":                      true,
	"manifest.icon.missing":                   true,
	"manifest.icon.format":                    true,
	"manifest.icon.size":                      true,
	"manifest.capabilities.api_read.unknown":  true,
	"manifest.capabilities.api_write.unknown": true,
	"manifest.capabilities.events.pattern":    true,
	"manifest.capabilities.events.unknown":    true,
	"manifest.actions.resource_scope":         true,
	"manifest.auth_providers.capability":      true,
	"manifest.auth_providers.initiate":        true,
	"manifest.auth_providers.required":        true,
	"manifest.auth_providers.duplicate":       true,
	"manifest.config_schema.secret":           true,
	"manifest.config_schema.required":         true,
	"manifest.config_schema.type":             true,
	"manifest.config_schema.properties":       true,
	"manifest.config_schema.enum":             true,
	"manifest.agent_tools.surfaces.unknown":   true,
	"manifest.ui.bundle.missing":              true,
	"manifest.ui.styles.missing":              true,
	"manifest.ui.pages.required":              true,
	"manifest.executor_providers.capability":  true,
	"manifest.executor_providers.key":         true,
	"manifest.tools.legacy":                   true,
}

func severityOf(rule string) problem.Severity {
	if warningRules[rule] {
		return problem.Warning
	}
	return problem.Error
}

// ruleOf is the rule an invalid fixture breaks: its file name up to "--" or ".yaml".
func ruleOf(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".yaml")
	rule, _, _ := strings.Cut(name, "--")
	return rule
}

func glob(tb testing.TB, pattern string) []string {
	tb.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no files match %s (%v)", pattern, err)
	}
	return paths
}

func check(tb testing.TB, path string) (*manifest.Manifest, problem.List) {
	tb.Helper()
	data := mustRead(tb, path)
	m, probs := manifest.Parse(data)
	if m == nil {
		return nil, probs
	}
	return m, append(probs, m.Validate(packageFiles(tb, path, m))...)
}

func TestValidFixtures(t *testing.T) {
	for _, path := range glob(t, validDir+"/*.yaml") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			m, probs := check(t, path)
			if m == nil {
				t.Fatal("manifest did not parse")
			}
			if len(probs) != 0 {
				t.Errorf("want no problems, got:\n%s", render(probs))
			}
		})
	}
}

// TestInvalidFixtures checks that each invalid fixture reports exactly its rule, with the
// rule's severity, a field path or file, and the manifest file name.
func TestInvalidFixtures(t *testing.T) {
	for _, path := range glob(t, invalidDir+"/*.yaml") {
		rule := ruleOf(path)
		t.Run(filepath.Base(path), func(t *testing.T) {
			_, probs := check(t, path)
			if diff := cmp.Diff([]string{rule}, probs.Rules()); diff != "" {
				t.Fatalf("rules (-want +got):\n%s\n%s", diff, render(probs))
			}
			for _, p := range probs {
				if p.Severity != severityOf(rule) {
					t.Errorf("severity of %s: want %s, got %s", rule, severityOf(rule), p.Severity)
				}
				if p.File == "" || p.Message == "" {
					t.Errorf("problem without file or message: %+v", p)
				}
				if p.Path == "" && p.File == manifest.FileName && !strings.HasPrefix(rule, "manifest.yaml.") {
					t.Errorf("problem without field path: %+v", p)
				}
			}
		})
	}
}

// TestEveryRuleHasFixtures ties the rule ids in the source to the invalid fixtures and the
// severity table, so a new rule cannot land untested.
func TestEveryRuleHasFixtures(t *testing.T) {
	literal := regexp.MustCompile(`"(manifest\.[a-z_]+(?:\.[a-z_]+)*)"`)
	inSource := map[string]bool{}
	for _, path := range glob(t, "*.go") {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		for _, m := range literal.FindAllStringSubmatch(string(mustRead(t, path)), -1) {
			if m[1] != manifest.FileName {
				inSource[m[1]] = true
			}
		}
	}
	withFixture := map[string]bool{}
	for _, path := range glob(t, invalidDir+"/*.yaml") {
		withFixture[ruleOf(path)] = true
	}
	if diff := cmp.Diff(sortedSet(inSource), sortedSet(withFixture)); diff != "" {
		t.Errorf("rules in source vs rules with an invalid fixture (-source +fixtures):\n%s", diff)
	}
	for rule := range warningRules {
		if !inSource[rule] {
			t.Errorf("warningRules names %s, which the source never reports", rule)
		}
	}
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func render(probs problem.List) string {
	var b strings.Builder
	for _, p := range probs {
		b.WriteString(p.String() + "\n")
	}
	return b.String()
}

func TestFixturesAreReadable(t *testing.T) {
	// The corpus copy must stay byte-identical in count to its SOURCES.tsv.
	sources := strings.Split(strings.TrimSpace(string(mustRead(t, corpusDir+"/SOURCES.tsv"))), "\n")
	files := glob(t, corpusDir+"/*.yaml")
	if len(sources)-1 != len(files) {
		t.Errorf("SOURCES.tsv lists %d manifests, the directory holds %d", len(sources)-1, len(files))
	}
	if _, err := os.Stat(corpusDir + "/README.md"); err != nil {
		t.Errorf("corpus README missing: %v", err)
	}
}

package rules_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/rules"
)

// emitters are the packages whose rule ids the table documents.
var emitters = []string{"../manifest", "../extension", "../index", "../verify", "../verify/signature", "../ingest", "../pull"}

const prefixes = `manifest|extension|registry|index|archive|checksums|package|publish|signature|oidc|sync|host|upgrade|compat|quarantine|scan|report|provenance|webhooks`

var (
	ruleLiteral   = regexp.MustCompile(`"((?:` + prefixes + `)(?:\.[a-z0-9_]+)+)"`)
	prefixLiteral = regexp.MustCompile(`"((?:` + prefixes + `)(?:\.[a-z0-9_]+)*\.)"`)
	directCall    = regexp.MustCompile(`(?i)(errorf|warnf|stop)\("((?:` + prefixes + `)(?:\.[a-z0-9_]+)+)"`)
)

// notRules are string literals of the rule shape that are file names or event types, not rule ids.
var notRules = map[string]bool{"manifest.yaml": true, "checksums.txt": true, "checksums.txt.sig": true,
	// webhook event types (ingest/webhooks_config.go)
	"package.deprecated": true, "package.quarantined": true, "sync.failed": true}

type scan struct {
	ids      map[string]bool
	prefixes []string
	severity map[string]map[problem.Severity]bool // from direct Errorf/Warnf calls
}

func scanSources(t *testing.T) scan {
	t.Helper()
	s := scan{ids: map[string]bool{}, severity: map[string]map[problem.Severity]bool{}}
	for _, dir := range emitters {
		paths, err := filepath.Glob(dir + "/*.go")
		if err != nil || len(paths) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, p := range paths {
			if strings.HasSuffix(p, "_test.go") {
				continue
			}
			s.add(t, p)
		}
	}
	return s
}

func (s *scan) add(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	src := string(data)
	for _, m := range ruleLiteral.FindAllStringSubmatch(src, -1) {
		if !notRules[m[1]] {
			s.ids[m[1]] = true
		}
	}
	for _, m := range prefixLiteral.FindAllStringSubmatch(src, -1) {
		s.prefixes = append(s.prefixes, m[1])
	}
	for _, m := range directCall.FindAllStringSubmatch(src, -1) {
		sev := problem.Error
		if strings.EqualFold(m[1], "warnf") {
			sev = problem.Warning
		}
		if s.severity[m[2]] == nil {
			s.severity[m[2]] = map[problem.Severity]bool{}
		}
		s.severity[m[2]][sev] = true
	}
}

// TestTableMatchesEmittedRules: every rule id in the validators' source has an entry, and
// every entry names a rule the source emits (literally, or through a prefix such as
// "extension.launch."+field).
func TestTableMatchesEmittedRules(t *testing.T) {
	s := scanSources(t)
	table := map[string]bool{}
	for _, r := range rules.All() {
		table[r.ID] = true
	}
	var missing, stale []string
	for id := range s.ids {
		if !table[id] {
			missing = append(missing, id)
		}
	}
	for id := range table {
		if !s.ids[id] && !s.hasPrefixOf(id) {
			stale = append(stale, id)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	if len(missing) > 0 {
		t.Errorf("rules emitted but not in the table (add them to rules/table_*.go):\n  %s", strings.Join(missing, "\n  "))
	}
	if len(stale) > 0 {
		t.Errorf("rules in the table that nothing emits (remove or rename them):\n  %s", strings.Join(stale, "\n  "))
	}
}

func (s scan) hasPrefixOf(id string) bool {
	for _, p := range s.prefixes {
		if strings.HasPrefix(id, p) && !strings.Contains(id[len(p):], ".") {
			return true
		}
	}
	return false
}

// TestSeverityMatchesSource: a rule the source reports only through Errorf (Warnf) is an
// error (warning) in the table; for the manifest, whose helpers take the rule as a
// variable, the table's warnings equal the manifest tests' warningRules.
func TestSeverityMatchesSource(t *testing.T) {
	s := scanSources(t)
	for _, r := range rules.All() {
		sevs := s.severity[r.ID]
		if len(sevs) > 0 && !sevs[r.Severity] {
			t.Errorf("%s is a %s in the table but the source reports it as %v", r.ID, r.Severity, keys(sevs))
		}
	}
	data, err := os.ReadFile("../manifest/manifest_test.go")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)var warningRules = map\[string\]bool\{(.*?)\n\}`).FindSubmatch(data)
	if block == nil {
		t.Fatal("manifest/manifest_test.go has no warningRules table")
	}
	var want []string
	for _, m := range regexp.MustCompile(`"([^"]+)"`).FindAllSubmatch(block[1], -1) {
		want = append(want, string(m[1]))
	}
	var got []string
	for _, r := range rules.All() {
		if strings.HasPrefix(r.ID, "manifest.") && r.Severity == problem.Warning {
			got = append(got, r.ID)
		}
	}
	sort.Strings(want)
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("manifest warnings: manifest tests' warningRules vs the table (-tests +table):\n%s", diff)
	}
}

func keys(m map[problem.Severity]bool) []problem.Severity {
	var out []problem.Severity
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// TestEveryRuleIsDocumented: each entry says what it checks, why, and shows a failing and
// a fixed example, in a section the reference has.
func TestEveryRuleIsDocumented(t *testing.T) {
	for _, r := range rules.All() {
		if _, ok := rules.SectionOf(r.Section); !ok {
			t.Errorf("%s: unknown section %q", r.ID, r.Section)
		}
		for name, v := range map[string]string{"Checks": r.Checks, "Why": r.Why, "Bad": r.Bad, "Good": r.Good} {
			if strings.TrimSpace(v) == "" {
				t.Errorf("%s: %s is empty", r.ID, name)
			}
		}
		if r.Bad == r.Good {
			t.Errorf("%s: the failing and the fixed example are the same", r.ID)
		}
		if r.Severity != problem.Error && r.Severity != problem.Warning {
			t.Errorf("%s: severity %q", r.ID, r.Severity)
		}
	}
}

func TestDocPathAndLinker(t *testing.T) {
	if got, want := rules.DocPath("manifest.id.pattern"), "/docs/reference/kandev-manifest#manifest.id.pattern"; got != want {
		t.Errorf("DocPath = %q, want %q", got, want)
	}
	if got := rules.DocPath("no.such.rule"); got != "" {
		t.Errorf("DocPath of an unknown rule = %q, want \"\"", got)
	}
	link := rules.Linker("https://plugins.example.com/")
	if got, want := link("archive.limit.file"), "https://plugins.example.com/docs/reference/package#archive.limit.file"; got != want {
		t.Errorf("Linker = %q, want %q", got, want)
	}
}

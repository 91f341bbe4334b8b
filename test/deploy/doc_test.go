package deploy_test

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const docPath = "../../docs/deploy.md"

func readDoc(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile(docPath)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

var tableRow = regexp.MustCompile("^\\| `(--[a-z0-9-]+)` \\| `([A-Z0-9_]+)` \\|")

// settingsTable is the flag → environment variable of every row of docs/deploy.md's
// settings table.
func settingsTable(tb testing.TB, doc string) map[string]string {
	tb.Helper()
	_, rest, ok := strings.Cut(doc, "<!-- settings:start -->")
	table, _, ok2 := strings.Cut(rest, "<!-- settings:end -->")
	if !ok || !ok2 {
		tb.Fatalf("%s has no <!-- settings:start --> … <!-- settings:end --> table", docPath)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(table, "\n") {
		if m := tableRow.FindStringSubmatch(line); m != nil {
			if _, dup := rows[m[1]]; dup {
				tb.Errorf("settings table: %s has two rows", m[1])
			}
			rows[m[1]] = m[2]
		} else if strings.HasPrefix(line, "| `") {
			tb.Errorf("settings table: row %q is not | `--flag` | `REGISTRY_VAR` | …", line)
		}
	}
	return rows
}

// TestDocumentsEverySetting: the settings table of docs/deploy.md lists exactly the flags
// of `registry serve -h`, each with the environment variable the help names.
func TestDocumentsEverySetting(t *testing.T) {
	serve := helpFlags(t, "serve")
	table := settingsTable(t, readDoc(t))
	for _, name := range slices.Sorted(maps.Keys(serve)) {
		env, ok := table[name]
		switch {
		case !ok:
			t.Errorf("registry serve %s (%s) is not in the settings table of %s: add a row", name, serve[name].env, docPath)
		case env != serve[name].env:
			t.Errorf("settings table: %s has %s, the help says %s", name, env, serve[name].env)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(table)) {
		if _, ok := serve[name]; !ok {
			t.Errorf("settings table: %s is not a flag of registry serve (-h): remove or rename the row", name)
		}
	}
}

// foreignFlags are the flags docs/deploy.md gives other tools, by the tool.
var foreignFlags = map[string]string{
	"--format":   "pg_dump",
	"--replicas": "kubectl scale",
}

// docCommands are the registry commands docs/deploy.md runs.
var docCommands = [][]string{{"serve"}, {"migrate"}, {"sync"}, {"backup"}, {"restore"}, {"fsck"}, {"log", "key"}}

var anyFlag = regexp.MustCompile("(?:^|[\\s`(\\[])(--[a-z](?:[a-z0-9-]*[a-z0-9])?)")

// TestDocFlagsExist: every flag docs/deploy.md names is a flag of a registry command it
// runs (or of another tool, listed in foreignFlags).
func TestDocFlagsExist(t *testing.T) {
	known := map[string]bool{}
	for _, cmd := range docCommands {
		for name := range helpFlags(t, cmd...) {
			known[name] = true
		}
	}
	for _, m := range anyFlag.FindAllStringSubmatch(readDoc(t), -1) {
		if name := m[1]; !known[name] && foreignFlags[name] == "" {
			t.Errorf("%s names %s, a flag of none of registry %v", docPath, name, docCommands)
		}
	}
}

var requiredList = regexp.MustCompile(`<!-- required: ([^>]*) -->`)

// requiredSettings are the settings docs/deploy.md says a replicated deployment needs.
func requiredSettings(tb testing.TB) []string {
	tb.Helper()
	m := requiredList.FindStringSubmatch(readDoc(tb))
	if m == nil {
		tb.Fatalf("%s has no <!-- required: --flag … --> list", docPath)
	}
	return strings.Fields(m[1])
}

// TestRequiredSettingsExist: each required setting is a flag of serve.
func TestRequiredSettingsExist(t *testing.T) {
	serve := helpFlags(t, "serve")
	req := requiredSettings(t)
	if len(req) < 3 {
		t.Fatalf("required settings %v: expected at least --database, --blobs and --data", req)
	}
	for _, name := range req {
		if _, ok := serve[name]; !ok {
			t.Errorf("required setting %s is not a flag of registry serve", name)
		}
	}
}

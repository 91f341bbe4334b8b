package index_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/problem"
)

// pluginsYAML is a list of the given plugin ids, each with its own repository; an id
// written "new-id>old-id" gets similar_to_allowed: old-id.
func pluginsYAML(ids ...string) string {
	var b strings.Builder
	b.WriteString("plugins:\n")
	for i, id := range ids {
		id, allow, _ := strings.Cut(id, ">")
		fmt.Fprintf(&b, "  - id: %s\n    repo: owner%d/repo\n", id, i)
		if allow != "" {
			fmt.Fprintf(&b, "    similar_to_allowed: %s\n", allow)
		}
	}
	return b.String()
}

// lookalikes is the look-alike problems of a parsed list, as "severity rule path".
func lookalikes(probs problem.List) []string {
	var out []string
	for _, p := range probs {
		if strings.Contains(p.Rule, "confusable") || strings.Contains(p.Rule, "similar_to_allowed") {
			out = append(out, string(p.Severity)+" "+p.Rule+" "+p.Path)
		}
	}
	return out
}

func TestLookalikeIDsAreRefused(t *testing.T) {
	const second = "error registry.id.confusable plugins[1].id (line 4, column 9)"
	tests := []struct {
		name   string
		ids    []string
		want   []string
		reason string // a phrase of the message, naming why
	}{
		{"separator swapped", []string{"acme-hello", "acme_hello"}, []string{second}, `the same ("acmehello") once case and the separators`},
		{"separator dropped", []string{"acme-hello", "acmehello"}, []string{second}, "separators"},
		{"dot for dash", []string{"acme.hello", "acme-hello"}, []string{second}, "separators"},
		{"digit one for l", []string{"acme-tools", "acme-too1s"}, []string{second}, "once look-alike characters are mapped"},
		{"i for l", []string{"acme-tools", "acme-toois"}, []string{second}, "look-alike characters"},
		{"digit zero for o", []string{"ops-dashboard", "0ps-dashboard"}, []string{second}, "look-alike characters"},
		{"rn for m", []string{"acme-modern-board", "acme-rnodern-board"}, []string{second}, "look-alike characters"},
		{"vv for w", []string{"acme-workflow-board", "acme-vvorkflow-board"}, []string{second}, "look-alike characters"},
		{"one letter added", []string{"lodash", "lodashs"}, []string{second}, "one edit apart"},
		{"one letter removed", []string{"lodash", "lodsh"}, []string{second}, "one edit apart"},
		{"one letter replaced", []string{"express", "exprass"}, []string{second}, "one edit apart"},
		{"neighbours swapped", []string{"lodash", "lodahs"}, []string{second}, "one edit apart"},
		{"one edit ignoring separators", []string{"acme-ui", "acme-ux"}, []string{second}, "one edit apart"},
		{"eight letters is short", []string{"colorful", "colorfil"}, []string{second}, "one edit apart"},
		{"the later one is reported, naming the earlier", []string{"acme-board", "other", "acme_board"},
			[]string{"error registry.id.confusable plugins[2].id (line 6, column 9)"}, `"acme_board" looks like "acme-board" (plugins[0].id, line 2)`},
		// Not look-alikes:
		{"nine letters is long", []string{"colorfuls", "colorfuly"}, nil, ""},
		{"a long family", []string{"acme-jira-board", "acme-jira-boards"}, nil, ""},
		{"three letters is too short to misspell", []string{"git", "gif"}, nil, ""},
		{"numbered siblings", []string{"page-01", "page-02"}, nil, ""},
		{"numbered siblings, digits swapped", []string{"page-12", "page-21"}, nil, ""},
		{"versions", []string{"acme-v1", "acme-v2"}, nil, ""},
		{"two edits", []string{"lodash", "ladish"}, nil, ""},
		{"a letter moved, not swapped", []string{"abcdefg", "acdefgb"}, nil, ""},
		{"distinct words", []string{"acme-stats", "acme-board"}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, probs := index.ParseList([]byte(pluginsYAML(tt.ids...)))
			if diff := cmp.Diff(tt.want, lookalikes(probs)); diff != "" {
				t.Fatalf("problems (-want +got):\n%s\nall: %v", diff, probs)
			}
			if tt.reason == "" {
				return
			}
			msg := probs.Errors()[0].Message
			for _, part := range []string{tt.reason, "similar_to_allowed: " + tt.ids[0]} {
				if !strings.Contains(msg, part) {
					t.Errorf("message %q does not say %q", msg, part)
				}
			}
		})
	}
}

// TestLookalikeUnicode uses lists built in Go: ParseList refuses ids outside
// [a-z0-9._-] before they are compared, so only CheckLookalikes sees these.
func TestLookalikeUnicode(t *testing.T) {
	tests := []struct {
		name, first, second, reason string
	}{
		{"case", "acme-hello", "Acme-Hello", "differ only in letter case"},
		{"case beyond ASCII", "straße-tools", "STRASSE-tools", "differ only in letter case"},
		{"Cyrillic e", "acme-hello", "acme-h\u0435llo", "look-alike characters"},
		{"Cyrillic a o p c", "acme-ops-panel", "\u0430\u0441me-\u043e\u0440s-panel", "look-alike characters"},
		{"Greek capitals", "acme-tool-box", "\u0391C\u039c\u0395-tool-box", "look-alike characters"}, // Α, Μ, Ε: not A, M, E
		{"Greek capital eta with tonos", "acme-hub", "acme-\u0389ub", "look-alike characters"},       // Ή: decomposed before folding, to Η
		{"Greek omicron", "acme-monitor", "acme-m\u03bfnitor", "look-alike characters"},
		{"fullwidth", "acme-board", "\uff41\uff43\uff4d\uff45-board", "look-alike characters"},
		{"accent", "acme-resume", "acme-r\u00e9sum\u00e9", "look-alike characters"},
		{"combining accent", "acme-resume", "acme-re\u0301sume", "look-alike characters"},
		{"zero-width space", "acme-resume", "acme-re\u200bsume", "look-alike characters"},
		{"Unicode dash", "acme-resume", "acme\u2010resume", "look-alike characters"},
		{"dotless i", "acme-tools-kit", "acme-too\u0131s-kit", "look-alike characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &index.List{Plugins: []index.Entry{{ID: tt.first}, {ID: tt.second}}}
			probs := index.CheckLookalikes(nil, l)
			if got := probs.Rules(); !cmp.Equal(got, []string{"registry.id.confusable"}) {
				t.Fatalf("rules = %v, want [registry.id.confusable]; problems: %v", got, probs)
			}
			if p := probs[0]; p.Path != "plugins[1].id" || !strings.Contains(p.Message, tt.reason) {
				t.Errorf("problem = %+v, want path plugins[1].id and a message saying %q", p, tt.reason)
			}
		})
	}
}

func TestSimilarToAllowed(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"the later entry allows the earlier", pluginsYAML("acme-hello", "acme_hello>acme-hello"), nil},
		{"the earlier entry allows the later", pluginsYAML("acme-hello>acme_hello", "acme_hello"), nil},
		{"an allowance covers only the id it names", pluginsYAML("acme-hello", "acme.hello", "acme_hello>acme-hello"),
			[]string{"error registry.id.confusable plugins[1].id (line 4, column 9)", "error registry.id.confusable plugins[2].id (line 6, column 9)"}},
		{"a list of allowances", pluginsYAML("acme-hello", "acme.hello") + "  - id: acme_hello\n    repo: x/y\n    similar_to_allowed: [acme-hello, acme.hello]\n",
			[]string{"error registry.id.confusable plugins[1].id (line 4, column 9)"}},
		{"an unknown id", pluginsYAML("acme-hello", "acme-stats>acme-helo"),
			[]string{"error registry.similar_to_allowed.unknown plugins[1].similar_to_allowed (line 6, column 25)"}},
		{"the entry itself", pluginsYAML("acme-hello", "acme-stats>acme-stats"),
			[]string{"error registry.similar_to_allowed plugins[1].similar_to_allowed (line 6, column 25)"}},
		{"an allowance that allows nothing", pluginsYAML("acme-hello", "acme-stats>acme-hello"),
			[]string{"warning registry.similar_to_allowed.unused plugins[1].similar_to_allowed (line 6, column 25)"}},
		{"not an id", pluginsYAML("acme-hello", "acme-stats>Acme_Hello"),
			[]string{"error registry.similar_to_allowed plugins[1].similar_to_allowed (line 6, column 25)"}},
		{"a mapping", "plugins:\n  - id: acme-hello\n    repo: x/y\n    similar_to_allowed: {id: x}\n", nil}, // registry.field.type, below
		{"an extension may not allow a plugin", "plugins:\n  - id: acme-jira\n    repo: x/y\nextensions:\n  - name: acme-j1ra\n    repo: x/z\n    similar_to_allowed: acme-jira\n",
			[]string{"error registry.similar_to_allowed.unknown extensions[0].similar_to_allowed (line 7, column 25)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, probs := index.ParseList([]byte(tt.yaml))
			if diff := cmp.Diff(tt.want, lookalikes(probs)); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nall: %v", diff, probs)
			}
		})
	}
	_, probs := index.ParseList([]byte(tests[8].yaml))
	if !probs.Has("registry.field.type") {
		t.Errorf("a mapping as similar_to_allowed: want registry.field.type, got %v", probs)
	}
}

func TestSimilarToAllowedBounded(t *testing.T) {
	var allow []string
	for i := range 17 {
		allow = append(allow, fmt.Sprintf("other-%02d", i))
	}
	yaml := pluginsYAML("acme-hello") + "    similar_to_allowed: [" + strings.Join(allow, ", ") + "]\n"
	_, probs := index.ParseList([]byte(yaml))
	var got []string
	for _, p := range probs {
		if p.Rule == "registry.similar_to_allowed" {
			got = append(got, p.Path)
		}
	}
	if want := []string{"plugins[0].similar_to_allowed (line 4, column 25)"}; !cmp.Equal(got, want) {
		t.Errorf("registry.similar_to_allowed at %v, want %v (17 names, 16 allowed); all: %v", got, want, probs)
	}
}

func TestLookalikeNamespaces(t *testing.T) {
	// Extensions are compared with extensions; a plugin and an extension are for
	// different hosts and never compared (their shared download URL is file_id's rule).
	yaml := "plugins:\n  - id: acme-jira\n    repo: x/a\nextensions:\n  - name: acme-j1ra\n    repo: x/b\n" +
		"  - name: \"@acme/jira\"\n    repo: x/c\n  - name: \"@acrne/jira\"\n    repo: x/d\n"
	_, probs := index.ParseList([]byte(yaml))
	want := []string{"error registry.id.confusable extensions[2].name (line 9, column 11)"}
	if diff := cmp.Diff(want, lookalikes(probs)); diff != "" {
		t.Errorf("problems (-want +got):\n%s\nall: %v", diff, probs)
	}
	if msg := probs.Errors()[0].Message; !strings.Contains(msg, `extension name "@acrne/jira" looks like "@acme/jira"`) {
		t.Errorf("message = %q, want it to name both extensions", msg)
	}
}

func TestLookalikesNamedPerEntryAreCapped(t *testing.T) {
	// Separator variants of one id: each later one resembles every earlier one, but at
	// most three are named per entry.
	ids := []string{"a-b-c-d-e", "a_b-c-d-e", "a-b_c-d-e", "a-b-c_d-e", "a-b-c-d_e", "ab-c-d-e"}
	_, probs := index.ParseList([]byte(pluginsYAML(ids...)))
	perEntry := map[string]int{}
	for _, p := range probs {
		if p.Rule == "registry.id.confusable" {
			field, _, _, _ := index.Position(p.Path)
			perEntry[field]++
		}
	}
	want := map[string]int{"plugins[1].id": 1, "plugins[2].id": 2, "plugins[3].id": 3, "plugins[4].id": 3, "plugins[5].id": 3}
	if diff := cmp.Diff(want, perEntry); diff != "" {
		t.Errorf("problems per entry (-want +got):\n%s", diff)
	}
}

func TestLoadListRefusesLookalikes(t *testing.T) {
	path := t.TempDir() + "/plugins.yaml"
	if err := os.WriteFile(path, []byte(pluginsYAML("acme-hello", "acme-he11o")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, probs, err := index.LoadList(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := probs.Errors().Rules(); !cmp.Equal(got, []string{"registry.id.confusable"}) {
		t.Errorf("LoadList errors = %v, want [registry.id.confusable]", probs)
	}
}

// TestCheckLookalikesWithSource: given the list's source, CheckLookalikes places each
// problem at its line and column, as ParseList does.
func TestCheckLookalikesWithSource(t *testing.T) {
	src := []byte(pluginsYAML("acme-hello", "other", "acme_hello"))
	l := &index.List{Plugins: []index.Entry{{ID: "acme-hello"}, {ID: "other"}, {ID: "acme_hello"}}}
	got := summary(index.CheckLookalikes(src, l))
	want := []string{"error registry.id.confusable plugins[2].id (line 6, column 9)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

package index_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/problem"
)

// summary renders problems as "severity rule path" lines, the part a test pins down.
func summary(l problem.List) []string {
	var out []string
	for _, p := range l {
		out = append(out, string(p.Severity)+" "+p.Rule+" "+p.Path)
	}
	return out
}

func mustRead(tb testing.TB, path string) []byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

func TestLoadListOfficialKandev(t *testing.T) {
	l, probs, err := index.LoadList(filepath.Join("..", "testdata", "index", "kandev-official-plugins.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if probs.HasErrors() {
		t.Fatalf("the official Kandev list must load unchanged, got %v", probs)
	}
	// It tags four entries "integrations", which no Kandev host filters by.
	wantWarnings := []string{
		"warning registry.categories.unknown plugins[4].categories[0] (line 40, column 18)",
		"warning registry.categories.unknown plugins[5].categories[0] (line 43, column 18)",
		"warning registry.categories.unknown plugins[10].categories[0] (line 58, column 18)",
		"warning registry.categories.unknown plugins[12].categories[0] (line 64, column 18)",
	}
	if diff := cmp.Diff(wantWarnings, summary(probs)); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if got := len(l.Plugins); got != 14 {
		t.Errorf("plugins = %d, want 14", got)
	}
	e, ok := l.Plugin("kandev-plugin-deepseek-balance")
	if !ok {
		t.Fatal("kandev-plugin-deepseek-balance not found")
	}
	want := index.Entry{ID: "kandev-plugin-deepseek-balance", Repo: "Fclem/kandev-plugin-deepseek-balance",
		Kind: index.KindPlugin, Categories: []string{"analytics"}}
	if diff := cmp.Diff(want, *e); diff != "" {
		t.Errorf("entry (-want +got):\n%s", diff)
	}
	if _, ok := l.Plugin("missing"); ok {
		t.Error("Plugin(missing) found something")
	}
	if _, ok := l.Extension("kandev-session-cost"); ok {
		t.Error("Extension found a plugin id")
	}
}

func TestLoadListIOError(t *testing.T) {
	if _, _, err := index.LoadList(filepath.Join(t.TempDir(), "absent.yaml")); err == nil {
		t.Fatal("want an error for a missing file")
	}
}

func TestLoadListSetsFile(t *testing.T) {
	path := filepath.Join("..", "testdata", "index", "invalid", "bad-kind.yaml")
	_, probs, err := index.LoadList(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(probs) != 1 || probs[0].File != path {
		t.Fatalf("want one problem in %s, got %+v", path, probs)
	}
}

func TestParseListValid(t *testing.T) {
	l, probs := index.ParseList(mustRead(t, filepath.Join("..", "testdata", "index", "valid.yaml")))
	if len(probs) != 0 {
		t.Fatalf("unexpected problems: %v", probs)
	}
	stats := &index.SigstoreIdentity{Repository: "acme/kandev-plugin-stats", Workflow: ".github/workflows/release.yml",
		Ref: "refs/tags/v*", Issuer: index.DefaultIssuer}
	want := &index.List{
		Plugins: []index.Entry{
			{ID: "acme-board", Repo: "acme/kandev-canvas-board", Kind: "canvas", Categories: []string{"tools"},
				Featured: true, Owners: []string{"acme"}, Previews: []index.Preview{
					{URL: "https://raw.githubusercontent.com/acme/kandev-canvas-board/v1.0.0/docs/cover.png", Alt: "Board showing three columns"},
					{URL: "https://cdn.example.com/board/detail.webp?size=large&fmt=webp", Alt: "  Card detail with a checklist  "},
				}},
			{ID: "acme-stats", Repo: "acme/kandev-plugin-stats", Kind: "plugin", Official: true,
				Signing: &index.Signing{Required: true, Sigstore: stats}, Owners: []string{"acme", "acme-ci"}},
			{ID: "keyed.plugin_2", Repo: "Keyed-Org/plugin.keyed", Kind: "plugin",
				Signing: &index.Signing{Ed25519Keys: []string{"dWFehqq594S/FGnmD3V5TzloHyXzjVKYsp+jc+WM+jA="}}},
			{ID: "plain-signed", Repo: "acme/plain", Kind: "plugin", Signing: &index.Signing{Required: true,
				Sigstore: &index.SigstoreIdentity{Repository: "acme/plain", Issuer: index.DefaultIssuer}}},
		},
		Extensions: []index.ExtensionEntry{
			{Name: "@acme/curupira-github-trigger", Repo: "acme/curupira-github-trigger", Categories: []string{"automation"},
				Featured: true, Owners: []string{"acme"}, Signing: &index.Signing{
					Sigstore: &index.SigstoreIdentity{Repository: "acme/releases", Issuer: index.DefaultIssuer}}},
		},
	}
	if diff := cmp.Diff(want, l); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	if e, ok := l.Extension("@acme/curupira-github-trigger"); !ok || e.Repo != "acme/curupira-github-trigger" {
		t.Errorf("Extension lookup = %+v, %v", e, ok)
	}
}

func TestParseListInvalid(t *testing.T) {
	tests := map[string][]string{
		"alias":           {"error registry.yaml.alias line 2, column 5", "error registry.yaml.alias line 5, column 5"},
		"bad-ed25519":     {"error registry.signing.ed25519_keys plugins[0].signing.ed25519_keys[0] (line 5, column 22)"},
		"short-ed25519":   {"error registry.signing.ed25519_keys plugins[0].signing.ed25519_keys[0] (line 5, column 22)"},
		"bad-id":          {"error registry.id plugins[0].id (line 2, column 9)"},
		"config-id":       {"error registry.id plugins[0].id (line 2, column 9)"},
		"bad-issuer":      {"error registry.signing.sigstore.issuer plugins[0].signing.sigstore.issuer (line 6, column 17)"},
		"bad-kind":        {"error registry.kind plugins[0].kind (line 4, column 11)"},
		"bad-ref":         {"error registry.signing.sigstore.ref plugins[0].signing.sigstore.ref (line 6, column 14)"},
		"bad-ref-glob":    {"error registry.signing.sigstore.ref plugins[0].signing.sigstore.ref (line 6, column 14)"},
		"bad-workflow":    {"error registry.signing.sigstore.workflow plugins[0].signing.sigstore.workflow (line 6, column 19)"},
		"bad-repo":        {"error registry.repo plugins[0].repo (line 3, column 11)"},
		"repo-git-suffix": {"error registry.repo plugins[0].repo (line 3, column 11)"},
		"bad-sigstore-repository": {
			"error registry.signing.sigstore.repository plugins[0].signing.sigstore.repository (line 6, column 21)"},
		"bad-owner": {"error registry.owners plugins[0].owners[0] (line 4, column 14)",
			"warning registry.owners plugins[0].owners[2] (line 4, column 33)"},
		"duplicate-category": {"warning registry.categories plugins[0].categories[1] (line 4, column 25)",
			"error registry.categories plugins[0].categories[2] (line 4, column 32)"},
		"canvas-no-previews":      {"error registry.previews.required plugins[0].previews (line 2, column 5)"},
		"too-many-previews":       {"error registry.previews.count plugins[0].previews (line 21, column 9)"},
		"preview-http":            {"error registry.previews.url plugins[0].previews[0].url (line 5, column 14)"},
		"preview-relative":        {"error registry.previews.url plugins[0].previews[0].url (line 5, column 14)"},
		"preview-credentials":     {"error registry.previews.url plugins[0].previews[0].url (line 5, column 14)"},
		"preview-fragment":        {"error registry.previews.url plugins[0].previews[0].url (line 5, column 14)"},
		"preview-long-url":        {"error registry.previews.url plugins[0].previews[0].url (line 5, column 14)"},
		"preview-alt-blank":       {"error registry.previews.alt plugins[0].previews[0].alt (line 6, column 14)"},
		"preview-alt-long":        {"error registry.previews.alt plugins[0].previews[0].alt (line 6, column 14)"},
		"preview-missing-alt":     {"error registry.field.required plugins[0].previews[0].alt (line 5, column 9)"},
		"duplicate-id":            {"error registry.id.duplicate plugins[1].id (line 4, column 9)"},
		"duplicate-key":           {"error registry.field.duplicate plugins[0].repo (line 4, column 5)"},
		"missing-repo":            {"error registry.field.required plugins[0].repo (line 2, column 5)"},
		"unknown-field":           {"error registry.field.unknown plugins[0].featurd (line 4, column 5)"},
		"extension-unknown-field": {"error registry.field.unknown extensions[0].kind (line 4, column 5)"},
		"bad-extension-name":      {"error registry.extension.name extensions[0].name (line 2, column 11)"},
		"duplicate-extension":     {"error registry.extension.name.duplicate extensions[1].name (line 4, column 11)"},
		"wrong-type": {"error registry.field.type plugins[0].featured (line 4, column 15)",
			"error registry.field.type plugins[0].categories (line 5, column 17)"},
		"no-plugins": {"error registry.field.unknown plugin (line 1, column 1)",
			"error registry.field.required plugins (line 1, column 1)"},
		"top-level-list": {"error registry.field.type line 1, column 1"},
		"syntax":         {"error registry.yaml line 4, column 1"},
		"syntax-flow":    {"error registry.yaml line 5, column 3"},
		"syntax-mapping": {"error registry.yaml line 3, column 11"},
		"syntax-quote":   {"error registry.yaml line 3, column 11"},
		"unknown-category": {"warning registry.categories.unknown plugins[0].categories[1] (line 4, column 25)",
			"warning registry.categories.unknown plugins[0].categories[2] (line 4, column 38)"},
		"empty-owners": {"warning registry.owners.empty plugins[0].owners (line 4, column 13)",
			"warning registry.owners.empty extensions[0].owners (line 8, column 12)"},
		"empty":         {"error registry.yaml line 1, column 1"},
		"two-documents": {"error registry.yaml line 2, column 1"},
	}
	files, err := filepath.Glob(filepath.Join("..", "testdata", "index", "invalid", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(tests) {
		t.Errorf("%d fixtures in testdata/index/invalid, %d cases: keep them in step", len(files), len(tests))
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			_, probs := index.ParseList(mustRead(t, filepath.Join("..", "testdata", "index", "invalid", name+".yaml")))
			if diff := cmp.Diff(want, summary(probs)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			for _, p := range probs {
				if !strings.Contains(p.Message, "expected") && !strings.Contains(p.Message, "twice") &&
					!strings.Contains(p.Message, "already") && !strings.Contains(p.Message, "missing") &&
					!strings.Contains(p.Message, "needs") && !strings.Contains(p.Message, "found") {
					t.Errorf("message does not say what was expected or found: %q", p.Message)
				}
			}
		})
	}
}

func TestParseListKeepsGoodEntries(t *testing.T) {
	data := "plugins:\n  - id: good\n    repo: acme/good\n  - id: Bad\n    repo: acme/bad\n"
	l, probs := index.ParseList([]byte(data))
	if !probs.HasErrors() {
		t.Fatal("want an error for the bad id")
	}
	if _, ok := l.Plugin("good"); !ok || len(l.Plugins) != 1 {
		t.Errorf("want only the good entry, got %+v", l.Plugins)
	}
}

func TestPosition(t *testing.T) {
	tests := []struct {
		path      string
		field     string
		line, col int
		ok        bool
	}{
		{"plugins[3].previews[0].url (line 12, column 9)", "plugins[3].previews[0].url", 12, 9, true},
		{"line 1, column 1", "", 1, 1, true},
		{"launch.type (line 2, column 3)", "launch.type", 2, 3, true},
		{"plugins[0].id", "plugins[0].id", 0, 0, false},
	}
	for _, tt := range tests {
		field, line, col, ok := index.Position(tt.path)
		got := []any{field, line, col, ok}
		if diff := cmp.Diff([]any{tt.field, tt.line, tt.col, tt.ok}, got); diff != "" {
			t.Errorf("Position(%q) (-want +got):\n%s", tt.path, diff)
		}
	}
}

func TestByRepo(t *testing.T) {
	data := "plugins:\n  - id: a\n    repo: Acme/tools\n  - id: b\n    repo: acme/tools\n  - id: c\n    repo: acme/tools-evil\n" +
		"extensions:\n  - name: t\n    repo: acme/tools\n"
	l, probs := index.ParseList([]byte(data))
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	tests := []struct {
		repo     string
		ids, ext []string
	}{
		{"acme/tools", []string{"a", "b"}, []string{"t"}},
		{"ACME/tools", []string{"a", "b"}, []string{"t"}},
		{"acme/Tools", nil, nil},
		{"acme/tool", nil, nil},
		{"acme", nil, nil},
	}
	for _, tt := range tests {
		ids, ext := l.ByRepo(tt.repo)
		if diff := cmp.Diff([][]string{tt.ids, tt.ext}, [][]string{ids, ext}); diff != "" {
			t.Errorf("ByRepo(%q) (-want +got):\n%s", tt.repo, diff)
		}
	}
}

// TestLoadListRefusesFileIDCollisions: entries of any kind that would share a download
// URL (/packages/<file id>/<file id>-<version>.tar.gz) are refused, naming both entries.
func TestLoadListRefusesFileIDCollisions(t *testing.T) {
	path := filepath.Join("testdata", "file-id-collision.yaml")
	_, probs, err := index.LoadList(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"error registry.file_id.collision extensions[0].name (line 7, column 11)",
		"error registry.file_id.collision extensions[2].name (line 11, column 11)",
	}
	if diff := cmp.Diff(want, summary(probs)); diff != "" {
		t.Fatalf("problems (-want +got):\n%s\n%v", diff, probs)
	}
	for i, says := range [][]string{
		{`extension "@acme/hello"`, `plugin "acme-hello" (plugins[0].id, line 2)`, `file id "acme-hello"`, "/packages/acme-hello/acme-hello-<version>.tar.gz", "Rename one"},
		{`extension "@acme-tools/x"`, `extension "@acme/tools-x" (extensions[1].name, line 9)`, `file id "acme-tools-x"`},
	} {
		for _, s := range says {
			if !strings.Contains(probs[i].Message, s) {
				t.Errorf("problem %d %q does not say %q", i, probs[i].Message, s)
			}
		}
		if probs[i].File != path {
			t.Errorf("problem %d file %q, want %q", i, probs[i].File, path)
		}
	}
}

func TestCheckFileIDsDistinct(t *testing.T) {
	data := []byte("plugins:\n  - id: acme-hello\n    repo: acme/a\nextensions:\n  - name: \"@acme/hello-x\"\n    repo: acme/b\n  - name: hello\n    repo: acme/c\n")
	l, probs := index.ParseList(data)
	if probs.HasErrors() {
		t.Fatal(probs)
	}
	if got := index.CheckFileIDs(data, l); len(got) != 0 {
		t.Errorf("distinct file ids refused: %v", got)
	}
}

// BenchmarkCheckFileIDs measures the file-id check (a second, alias-free YAML decode plus
// one map pass) on lists of n plugins and n extensions.
func BenchmarkCheckFileIDs(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		var src strings.Builder
		src.WriteString("plugins:\n")
		for i := range n {
			fmt.Fprintf(&src, "  - id: acme-p%d\n    repo: acme/p%d\n", i, i)
		}
		src.WriteString("extensions:\n")
		for i := range n {
			fmt.Fprintf(&src, "  - name: \"@acme/e%d\"\n    repo: acme/e%d\n", i, i)
		}
		data := []byte(src.String())
		l, probs := index.ParseList(data)
		if probs.HasErrors() {
			b.Fatal(probs)
		}
		b.Run(fmt.Sprintf("entries=%d", 2*n), func(b *testing.B) {
			for b.Loop() {
				if got := index.CheckFileIDs(data, l); len(got) != 0 {
					b.Fatal(got)
				}
			}
		})
	}
}

// TestCheckFileIDsMatchesLoadList: LoadList finds the entries' positions in the nodes it has
// already decoded; CheckFileIDs decodes the source again. Both must report the same.
func TestCheckFileIDsMatchesLoadList(t *testing.T) {
	path := filepath.Join("testdata", "file-id-collision.yaml")
	_, loaded, err := index.LoadList(path)
	if err != nil {
		t.Fatal(err)
	}
	data := mustRead(t, path)
	l, _ := index.ParseList(data)
	checked := index.CheckFileIDs(data, l).InFile(path)
	var fromLoad problem.List
	for _, p := range loaded {
		if p.Rule == "registry.file_id.collision" {
			fromLoad = append(fromLoad, p)
		}
	}
	if len(checked) == 0 {
		t.Fatal("the collision fixture reports no collision")
	}
	if diff := cmp.Diff(checked, fromLoad); diff != "" {
		t.Errorf("LoadList and CheckFileIDs disagree (-CheckFileIDs +LoadList):\n%s", diff)
	}
}

// TestParseListEmptySections: an empty or null section decodes to no slice at all.
func TestParseListEmptySections(t *testing.T) {
	l, probs := index.ParseList([]byte("plugins: []\nextensions:\n"))
	if probs.HasErrors() {
		t.Fatal(probs)
	}
	if diff := cmp.Diff(&index.List{}, l); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
}

// TestLoadListWarnsOfVersionSuffixedFileIDs: a file id that is another plus "-<version>"
// makes package file names ambiguous to read; the list is accepted with a warning.
func TestLoadListWarnsOfVersionSuffixedFileIDs(t *testing.T) {
	_, probs, err := index.LoadList(filepath.Join("testdata", "file-id-version-suffix.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"warning registry.file_id.version_suffix plugins[0].id (line 2, column 9)"}
	if diff := cmp.Diff(want, summary(probs)); diff != "" {
		t.Fatalf("problems (-want +got):\n%s\n%v", diff, probs)
	}
	for _, s := range []string{`plugin "kit-1.0.0"`, `plugin "kit" (plugins[1].id, line 5)`, "kit-1.0.0-0.1.0.tar.gz", "kit@1.0.0-0.1.0 or kit-1.0.0@0.1.0", "manifest decides"} {
		if !strings.Contains(probs[0].Message, s) {
			t.Errorf("%q does not say %q", probs[0].Message, s)
		}
	}
}

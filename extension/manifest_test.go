package extension_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/extension"
	"github.com/pluginyard/registry/problem"
)

const manifestDir = "../testdata/extension/manifests"

// finding is the part of a problem a fixture's "# want:" lines fix.
type finding struct {
	Severity problem.Severity
	Rule     string
	Path     string
}

// wants reads "# want: SEVERITY RULE PATH" lines from the top of a fixture.
func wants(t *testing.T, data []byte) []finding {
	t.Helper()
	var out []finding
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "# want: ")
		if !ok {
			continue
		}
		f := strings.SplitN(rest, " ", 3)
		if len(f) != 3 {
			t.Fatalf("bad want line %q", sc.Text())
		}
		out = append(out, finding{problem.Severity(f[0]), f[1], f[2]})
	}
	return out
}

func findings(l problem.List) []finding {
	var out []finding
	for _, p := range l {
		out = append(out, finding{p.Severity, p.Rule, p.Path})
	}
	return out
}

func sortFindings(f []finding) {
	sort.Slice(f, func(i, j int) bool {
		if f[i].Rule != f[j].Rule {
			return f[i].Rule < f[j].Rule
		}
		return f[i].Path < f[j].Path
	})
}

func TestParseFixtures(t *testing.T) {
	for _, dir := range []string{"valid", "invalid"} {
		files, err := filepath.Glob(filepath.Join(manifestDir, dir, "*.toml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no fixtures in %s: %v", dir, err)
		}
		for _, file := range files {
			t.Run(dir+"/"+filepath.Base(file), func(t *testing.T) {
				data, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				m, got := extension.Parse(data)
				want, gotF := wants(t, data), findings(got)
				sortFindings(want)
				sortFindings(gotF)
				if diff := cmp.Diff(want, gotF); diff != "" {
					t.Errorf("problems (-want +got):\n%s\nall: %v", diff, got)
				}
				if dir == "valid" && (m == nil || got.HasErrors()) {
					t.Errorf("valid fixture refused: %v", got)
				}
				if dir == "invalid" && !got.HasErrors() {
					t.Errorf("invalid fixture accepted")
				}
				for _, p := range got {
					if p.File != extension.FileName || p.Message == "" {
						t.Errorf("problem without file or message: %+v", p)
					}
				}
			})
		}
	}
}

func TestParseDecodesFields(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(manifestDir, "valid", "full.toml"))
	if err != nil {
		t.Fatal(err)
	}
	m, probs := extension.Parse(data)
	if probs.HasErrors() {
		t.Fatal(probs)
	}
	want := extension.Manifest{
		ManifestVersion: 1, Name: "@acme/curupira-jira", Version: "2.0.0-rc.1",
		Description: "Jira tickets as Curupira triggers.", ProtocolVersion: 2, Runtime: "python",
		Kind: "trigger", TriggerTypes: []string{"jira-ticket", "jira_comment"},
		Launch:   extension.Launch{Type: "python", Command: "curupira_jira/main.py", Args: []string{"--quiet"}},
		Homepage: "https://example.com/curupira-jira", License: "MIT", Repository: "https://github.com/acme/curupira-jira",
	}
	if diff := cmp.Diff(want, *m); diff != "" {
		t.Errorf("manifest (-want +got):\n%s", diff)
	}
}

func TestUnknownKeyMessagesNameTheLine(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(manifestDir, "invalid", "unknown-keys.toml"))
	if err != nil {
		t.Fatal(err)
	}
	_, probs := extension.Parse(data)
	want := map[string]string{"author": "line 9", "launch.entry": "line 15"}
	for _, p := range probs {
		if line, ok := want[p.Path]; ok && !strings.Contains(p.Message, line) {
			t.Errorf("%s: message %q does not name %s", p.Path, p.Message, line)
		}
		delete(want, p.Path)
	}
	if len(want) != 0 {
		t.Errorf("missing problems for %v", want)
	}
}

func TestVersionsAndNames(t *testing.T) {
	tests := []struct {
		name, version string
		want          []string
	}{
		{"a", "0.0.0", nil},
		{"@a-b/c.d_e~f", "1.0.0-alpha.1", nil},
		{"ext", "1.0.0+20130313144700", []string{"extension.version.semver"}},
		{"ext", "1.0.0.0", []string{"extension.version.semver"}},
		{"ext", "1.0.0\u202e", []string{"extension.version.semver"}},
		{"ext", "1.0.0-0.3.7", nil},
		{"ext", "1.0.0-01", []string{"extension.version.semver"}},
		{"ext", "v1.0.0", []string{"extension.version.semver"}},
		{"ext", "1.0.0-", []string{"extension.version.semver"}},
		{"ext", "1.0.0+a..b", []string{"extension.version.semver"}},
		{"_ext", "1.0.0", []string{"extension.name.format"}},
		{"@/ext", "1.0.0", []string{"extension.name.format"}},
		{"ext/sub", "1.0.0", []string{"extension.name.format"}},
		{strings.Repeat("a", 215), "1.0.0", []string{"extension.name.format"}},
	}
	for _, tt := range tests {
		m := extension.Manifest{ManifestVersion: 1, Name: tt.name, Version: tt.version, ProtocolVersion: 2,
			Runtime: "go", Kind: "trigger", TriggerTypes: []string{"t"}, Launch: extension.Launch{Type: "go", Package: "."}}
		if diff := cmp.Diff(tt.want, m.Validate().Rules()); diff != "" {
			t.Errorf("%q %q (-want +got):\n%s", tt.name, tt.version, diff)
		}
	}
}

func TestTypeErrorNamesTheLine(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(manifestDir, "invalid", "wrong-type.toml"))
	if err != nil {
		t.Fatal(err)
	}
	_, probs := extension.Parse(data)
	if len(probs) != 1 || !strings.Contains(probs[0].Message, "line 3") {
		t.Errorf("problems %v, want one naming line 3", probs)
	}
}

package index_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
)

// TestScanAllowParses: scan_allow names files and scan rules, on plugins and extensions,
// and Allows matches exactly that path and rule.
func TestScanAllowParses(t *testing.T) {
	data := `plugins:
  - id: acme-keys
    repo: acme/keys
    scan_allow:
      - {path: testdata/fake.pem, rule: scan.private_key}
      - path: docs/.env
        rule: scan.file.env
extensions:
  - name: "@acme/hook"
    repo: acme/hook
    scan_allow: [{path: package/test/token.txt, rule: scan.token.slack_webhook}]
`
	l, probs := index.ParseList([]byte(data))
	if len(probs) > 0 {
		t.Fatalf("problems: %v", probs)
	}
	p, _ := l.Plugin("acme-keys")
	want := []index.ScanAllow{{Path: "testdata/fake.pem", Rule: "scan.private_key"}, {Path: "docs/.env", Rule: "scan.file.env"}}
	if diff := cmp.Diff(want, p.ScanAllow); diff != "" {
		t.Errorf("plugin scan_allow (-want +got):\n%s", diff)
	}
	e, _ := l.Extension("@acme/hook")
	if diff := cmp.Diff([]index.ScanAllow{{Path: "package/test/token.txt", Rule: "scan.token.slack_webhook"}}, e.ScanAllow); diff != "" {
		t.Errorf("extension scan_allow (-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		file, rule string
		want       bool
	}{
		{"testdata/fake.pem", "scan.private_key", true},
		{"testdata/fake.pem", "scan.token.github", false},
		{"testdata/other.pem", "scan.private_key", false},
		{"./testdata/fake.pem", "scan.private_key", false},
	} {
		if got := index.Allows(p.ScanAllow, c.file, c.rule); got != c.want {
			t.Errorf("Allows(%q, %q) = %v, want %v", c.file, c.rule, got, c.want)
		}
	}
}

// TestScanAllowInvalid: every malformed allowance is reported with its rule, field path,
// line and column.
func TestScanAllowInvalid(t *testing.T) {
	head := "plugins:\n  - id: acme-keys\n    repo: acme/keys\n    scan_allow:\n"
	tests := map[string]struct {
		items string
		want  []string
	}{
		"unknown rule": {"      - {path: a.pem, rule: scan.private-key}\n",
			[]string{"error registry.scan_allow.rule plugins[0].scan_allow[0].rule (line 5, column 29)"}},
		"blocklist rule": {"      - {path: a.pem, rule: scan.blocklist.file}\n",
			[]string{"error registry.scan_allow.rule plugins[0].scan_allow[0].rule (line 5, column 29)"}},
		"absolute path": {"      - {path: /etc/a.pem, rule: scan.private_key}\n",
			[]string{"error registry.scan_allow.path plugins[0].scan_allow[0].path (line 5, column 16)"}},
		"dot slash": {"      - {path: ./a.pem, rule: scan.private_key}\n",
			[]string{"error registry.scan_allow.path plugins[0].scan_allow[0].path (line 5, column 16)"}},
		"dot dot": {"      - {path: ../a.pem, rule: scan.private_key}\n",
			[]string{"error registry.scan_allow.path plugins[0].scan_allow[0].path (line 5, column 16)"}},
		"pattern": {"      - {path: testdata/*.pem, rule: scan.private_key}\n",
			[]string{"error registry.scan_allow.path plugins[0].scan_allow[0].path (line 5, column 16)"}},
		"missing rule": {"      - {path: a.pem}\n",
			[]string{"error registry.field.required plugins[0].scan_allow[0].rule (line 5, column 9)"}},
		"unknown field": {"      - {path: a.pem, rule: scan.private_key, why: fixture}\n",
			[]string{"error registry.field.unknown plugins[0].scan_allow[0].why (line 5, column 47)"}},
		"not a list": {"      path: a.pem\n",
			[]string{"error registry.field.type plugins[0].scan_allow (line 5, column 7)"}},
		"repeated": {"      - {path: a.pem, rule: scan.private_key}\n      - {path: a.pem, rule: scan.private_key}\n",
			[]string{"warning registry.scan_allow plugins[0].scan_allow[1] (line 6, column 9)"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, probs := index.ParseList([]byte(head + tt.items))
			if diff := cmp.Diff(tt.want, summary(probs)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestScanAllowBounded: an entry allows at most 50 findings.
func TestScanAllowBounded(t *testing.T) {
	data := "plugins:\n  - id: acme-keys\n    repo: acme/keys\n    scan_allow:\n"
	for i := range 51 {
		data += "      - {path: f" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ".pem, rule: scan.private_key}\n"
	}
	l, probs := index.ParseList([]byte(data))
	if diff := cmp.Diff([]string{"error registry.scan_allow plugins[0].scan_allow (line 5, column 7)"}, summary(probs)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if p, _ := l.Plugin("acme-keys"); len(p.ScanAllow) != 50 {
		t.Errorf("kept %d allowances, want the first 50", len(p.ScanAllow))
	}
}

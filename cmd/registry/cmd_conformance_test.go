package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// buildExtension compiles the example Curupira extension (the registry's reference
// extension) and the wrapper that breaks it.
func buildExtension(t *testing.T) (reference, broken string) {
	t.Helper()
	dir := t.TempDir()
	reference, broken = filepath.Join(dir, "ext"), filepath.Join(dir, "broken")
	for bin, pkg := range map[string]string{reference: "../../examples/curupira-github-issues", broken: "../../testdata/extension/broken"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return reference, broken
}

// fakeIssues serves an empty issue list for any repository.
func fakeIssues(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode([]any{})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestCmdConformance(t *testing.T) {
	reference, broken := buildExtension(t)
	api := fakeIssues(t)
	table := `{"repo": "acme/widgets", "api_url": "` + api + `"}`
	tables := []string{"--table", "github-issue=" + table, "--table", "github-pull-request=" + table}
	tests := []struct {
		name      string
		args      []string
		want      int
		wantLines []string // starts of lines the table must hold, spaces collapsed
	}{
		{"reference passes", append(append([]string{"--timeout", "5s"}, tables...), "--", reference), exitOK,
			[]string{"print-manifest PASS", "trigger/poll PASS github-issue: 0 item(s), then values null; github-pull-request: 0 item(s), then values null", "15 checks: 15 passed, 0 failed, 0 skipped"}},
		{"missing values fails", append(append([]string{"--timeout=5s"}, tables...), "--", broken, "-fault", "no-values", "--", reference), exitInvalid,
			[]string{"trigger/poll FAIL github-issue: rpc: poll result has no values member", "15 checks: 14 passed, 1 failed, 0 skipped"}},
		{"no command", []string{"--timeout", "1s"}, exitUsage, nil},
		{"bad table", []string{"--table", "github-issue=[1]", "--", reference}, exitUsage, nil},
		{"bad timeout", []string{"--timeout", "soon", "--", reference}, exitUsage, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			c := &cli{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
			got := cmdConformance(context.Background(), c, tt.args)
			if got != tt.want {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", got, tt.want, stdout.String(), stderr.String())
			}
			var lines []string
			for _, l := range strings.Split(stdout.String(), "\n") {
				lines = append(lines, strings.Join(strings.Fields(l), " "))
			}
			var missing []string
			for _, want := range tt.wantLines {
				if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, want) }) {
					missing = append(missing, want)
				}
			}
			if diff := cmp.Diff([]string(nil), missing); diff != "" {
				t.Errorf("lines missing from the table (-want +got):\n%s\n%s", diff, stdout.String())
			}
		})
	}
}

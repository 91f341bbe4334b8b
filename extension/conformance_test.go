package extension_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/extension"
)

// Binaries built once by TestMain: the example extension (the reference implementation)
// and the wrapper that breaks it in one named way.
var referenceBin, brokenBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "conformance-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	referenceBin = filepath.Join(dir, "curupira-github-issues")
	brokenBin = filepath.Join(dir, "broken")
	for bin, pkg := range map[string]string{
		referenceBin: "../examples/curupira-github-issues",
		brokenBin:    "../testdata/extension/broken",
	} {
		out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", pkg, err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fakeGitHub serves /repos/acme/widgets/issues with two issues and one pull request.
func fakeGitHub(t *testing.T) string {
	t.Helper()
	items := []map[string]any{
		{"number": 7, "title": "Crash on start", "html_url": "https://github.com/acme/widgets/issues/7", "body": "It crashes.", "user": map[string]any{"login": "ana"}, "labels": []map[string]any{{"name": "bug"}}},
		{"number": 8, "title": "Add dark mode", "html_url": "https://github.com/acme/widgets/pull/8", "body": "", "user": map[string]any{"login": "bo"}, "labels": []map[string]any{}, "pull_request": map[string]any{"url": "x"}},
		{"number": 9, "title": "Typo in README", "html_url": "https://github.com/acme/widgets/issues/9", "body": "teh", "user": map[string]any{"login": "cy"}, "labels": []map[string]any{{"name": "docs"}}},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/repos/acme/widgets/issues" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(items)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func config(t *testing.T, command ...string) extension.Config {
	t.Helper()
	api := fakeGitHub(t)
	table := map[string]any{"repo": "acme/widgets", "api_url": api}
	return extension.Config{
		Command: command,
		Timeout: 5 * time.Second,
		Tables:  map[string]map[string]any{"github-issue": table, "github-pull-request": table},
	}
}

var allChecks = []string{
	extension.CheckPrintManifest, extension.CheckFraming, extension.CheckStdoutFramesOnly,
	extension.CheckInitialize, extension.CheckOtherMajor, extension.CheckDescribe, extension.CheckSchema,
	extension.CheckValidate, extension.CheckPoll, extension.CheckOnStarted, extension.CheckOnFinished,
	extension.CheckUnknownMethod, extension.CheckUnknownTrigger, extension.CheckOversizedFrame, extension.CheckShutdown,
}

func names(r *extension.ConformanceReport) []string {
	var out []string
	for _, c := range r.Checks {
		out = append(out, c.Name)
	}
	return out
}

func TestReferencePasses(t *testing.T) {
	t.Parallel()
	r := extension.Conformance(context.Background(), config(t, referenceBin))
	var table strings.Builder
	if err := r.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !r.OK() {
		t.Fatalf("reference extension failed:\n%s", table.String())
	}
	if diff := cmp.Diff(allChecks, names(r)); diff != "" {
		t.Errorf("checks (-want +got):\n%s", diff)
	}
	if r.Manifest == nil || r.Manifest.Name != "curupira-github-issues" {
		t.Errorf("manifest = %+v", r.Manifest)
	}
	poll, _ := r.Check(extension.CheckPoll)
	for _, want := range []string{"github-issue: 2 item(s), then values null", "github-pull-request: 1 item(s), then values null"} {
		if !strings.Contains(poll.Detail, want) {
			t.Errorf("poll detail %q lacks %q", poll.Detail, want)
		}
	}
}

// TestBrokenVariantsFail runs the checker on the reference broken in one way each and
// expects exactly the named checks to fail.
func TestBrokenVariantsFail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fault       string
		wantFailed  []string
		wantSkipped int
	}{
		{"ndjson", []string{extension.CheckFraming}, 13},
		{"no-values", []string{extension.CheckPoll}, 0},
		{"accept-major", []string{extension.CheckOtherMajor}, 0},
		{"stdout-logs", []string{extension.CheckStdoutFramesOnly}, 0},
		{"hang-shutdown", []string{extension.CheckShutdown}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.fault, func(t *testing.T) {
			t.Parallel()
			r := extension.Conformance(context.Background(), config(t, brokenBin, "-fault", tt.fault, "--", referenceBin))
			var table strings.Builder
			_ = r.WriteTable(&table)
			if diff := cmp.Diff(tt.wantFailed, r.Failed()); diff != "" {
				t.Errorf("failed checks (-want +got):\n%s\n%s", diff, table.String())
			}
			skipped := 0
			for _, c := range r.Checks {
				if c.Skipped {
					skipped++
				}
			}
			if skipped != tt.wantSkipped || r.OK() {
				t.Errorf("skipped %d (want %d), OK %v:\n%s", skipped, tt.wantSkipped, r.OK(), table.String())
			}
		})
	}
}

func TestFailureDetails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fault, check, want string
	}{
		{"ndjson", extension.CheckFraming, "newline-delimited JSON"},
		{"no-values", extension.CheckPoll, "no values member"},
		{"accept-major", extension.CheckOtherMajor, "answer error -32001"},
		{"stdout-logs", extension.CheckStdoutFramesOnly, "msg=starting"},
		{"hang-shutdown", extension.CheckShutdown, "no answer to shutdown"},
	}
	for _, tt := range tests {
		t.Run(tt.fault, func(t *testing.T) {
			t.Parallel()
			r := extension.Conformance(context.Background(), config(t, brokenBin, "-fault", tt.fault, "--", referenceBin))
			c, ok := r.Check(tt.check)
			if !ok || c.Passed || !strings.Contains(c.Detail, tt.want) {
				t.Errorf("%s = %+v, want a failure mentioning %q", tt.check, c, tt.want)
			}
		})
	}
}

func TestMissingCommand(t *testing.T) {
	t.Parallel()
	r := extension.Conformance(context.Background(), extension.Config{Command: []string{filepath.Join(t.TempDir(), "nope")}, Timeout: time.Second})
	if diff := cmp.Diff([]string{extension.CheckPrintManifest, extension.CheckFraming}, r.Failed()); diff != "" {
		t.Errorf("failed (-want +got):\n%s", diff)
	}
	if r.OK() {
		t.Error("report OK for a missing command")
	}
}

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/problem"
)

// hugeBrokenList writes a plugins.yaml with n entries whose ids are all invalid.
func hugeBrokenList(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("plugins:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - id: Bad_ID_%d\n    repo: acme/kandev-plugin-%d\n    owners: [acme]\n", i, i)
	}
	path := filepath.Join(t.TempDir(), "plugins.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBrokenListProblemsAreCapped: a plugins.yaml with thousands of problems is refused
// with at most problem.MaxListed listed (plus one summary per rule), a message of the same
// size, a short /readyz detail, and a capped `registry lint` listing whose summary still
// counts them all.
func TestBrokenListProblemsAreCapped(t *testing.T) {
	const n = 3000
	path := hugeBrokenList(t, n)
	_, err := loadList(path)
	var rf *ingest.Refusal
	if !errors.As(err, &rf) {
		t.Fatalf("loadList: %v, want a refusal", err)
	}
	rules := len(rf.Problems.Rules())
	if got := len(rf.Problems); got > problem.MaxListed+rules {
		t.Errorf("the refusal lists %d problems, want at most %d + one summary per rule", got, problem.MaxListed)
	}
	if !rf.Problems.Has("registry.id") {
		t.Errorf("the capped refusal lost the rule id registry.id: %v", rf.Problems.Rules())
	}
	if !strings.Contains(rf.Message, fmt.Sprintf("%d errors", n)) || len(rf.Message) > 64<<10 {
		t.Errorf("the refusal's message is %d bytes (want at most 64 KiB, counting all %d errors): %.200q", len(rf.Message), n, rf.Message)
	}
	r := &reloader{}
	r.last.Store(&reloadFailure{err})
	if d := r.detail()["plugins_yaml_reload"]; len(d) > 2<<10 || !strings.Contains(d, "registry lint") {
		t.Errorf("/readyz detail is %d bytes, want a short summary naming `registry lint`: %.300q", len(d), d)
	}

	c, out, errOut := testCLI(nil)
	if code := cmdLint(t.Context(), c, []string{path}); code != exitInvalid {
		t.Fatalf("lint exit %d", code)
	}
	if lines := strings.Count(out.String(), "\n"); lines > problem.MaxListed+rules {
		t.Errorf("lint printed %d lines, want at most %d + one summary per rule", lines, problem.MaxListed)
	}
	if !strings.Contains(errOut.String(), fmt.Sprintf("%d errors", n)) {
		t.Errorf("lint summary: %s", errOut.String())
	}
}

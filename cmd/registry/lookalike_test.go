package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pluginyard/registry/ingest"
)

const lookalikeList = "plugins:\n  - id: acme-tools\n    repo: acme/kandev-tools\n  - id: acme-too1s\n    repo: mallory/kandev-tools\n"

// TestLintRefusesLookalikes: `registry lint` exits 1 and names the rule and both ids.
func TestLintRefusesLookalikes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plugins.yaml")
	if err := os.WriteFile(path, []byte(lookalikeList), 0o644); err != nil {
		t.Fatal(err)
	}
	c, out, errOut := testCLI(nil)
	if code := cmdLint(context.Background(), c, []string{path}); code != 1 {
		t.Fatalf("lint exit %d, want 1; stdout %s stderr %s", code, out, errOut)
	}
	if s := out.String(); !strings.Contains(s, "[registry.id.confusable]") || !strings.Contains(s, `"acme-too1s" looks like "acme-tools"`) {
		t.Errorf("lint output does not name the rule and both ids:\n%s", s)
	}
}

// TestReloadRefusesLookalikes: the list loader behind start-up, SIGHUP and POST
// /api/v1/admin/reload refuses the list (a Refusal, 422) with the rule id, and accepts it
// once the later entry allows the earlier.
func TestReloadRefusesLookalikes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plugins.yaml")
	if err := os.WriteFile(path, []byte(lookalikeList), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := loadList(path)
	var rf *ingest.Refusal
	if !errors.As(err, &rf) || !rf.Problems.Has("registry.id.confusable") {
		t.Fatalf("loadList = %v, want a refusal with registry.id.confusable", err)
	}
	if err := os.WriteFile(path, []byte(lookalikeList+"    similar_to_allowed: acme-tools\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if l, err := loadList(path); err != nil || len(l.Plugins) != 2 {
		t.Errorf("loadList with similar_to_allowed = %v, %v; want both entries", l, err)
	}
}

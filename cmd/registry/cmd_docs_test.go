package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDocsReferenceIsFresh: the committed docs/reference is exactly what `registry docs`
// writes, so a rule added to the table without regenerating fails here (and in CI).
// Regenerate with: go run ./cmd/registry docs --out docs/reference
func TestDocsReferenceIsFresh(t *testing.T) {
	out := filepath.Join(t.TempDir(), "reference")
	var stdout, stderr bytes.Buffer
	c := &cli{stdout: &stdout, stderr: &stderr, stdin: strings.NewReader(""), getenv: func(string) string { return "" }}
	if code := run(context.Background(), []string{"docs", "--out", out}, c); code != exitOK {
		t.Fatalf("registry docs: exit %d, stderr %s", code, stderr.String())
	}
	want := readDir(t, out)
	got := readDir(t, filepath.Join("..", "..", "docs", "reference"))
	if diff := cmp.Diff(keysOf(want), keysOf(got)); diff != "" {
		t.Fatalf("docs/reference files (-generated +committed):\n%s\nrun: go run ./cmd/registry docs", diff)
	}
	for name := range want {
		if !bytes.Equal(want[name], got[name]) {
			t.Errorf("docs/reference/%s is stale; run: go run ./cmd/registry docs", name)
		}
	}
	if !strings.Contains(string(want["package.md"]), "| One file, decompressed | 200 MiB | 5 MiB |") {
		t.Errorf("package.md does not state the 5 MiB per-file canvas limit")
	}
	if !strings.Contains(string(want["kandev-manifest.md"]), `<a id="manifest.unknown_field"></a>`) {
		t.Errorf("kandev-manifest.md has no anchor for manifest.unknown_field")
	}
}

// TestDocsRemovesStaleFiles: a section that no longer exists leaves no file behind.
func TestDocsRemovesStaleFiles(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "old-section.md")
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := writeReference(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale %s kept: %v", stale, err)
	}
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = data
	}
	return out
}

func keysOf(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

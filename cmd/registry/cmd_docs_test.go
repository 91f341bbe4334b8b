package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/pack"
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

// TestVerifyLinksTheReference: each problem `registry verify` prints is followed by its
// rule's reference link: the path on any registry by default, absolute on REGISTRY_URL
// when set, in the text and in --json (doc_url).
func TestVerifyLinksTheReference(t *testing.T) {
	manifest := "id: acme-hello\napi_version: 3\nversion: \"1.0.0\"\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	var buf bytes.Buffer
	if err := pack.FS(fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: []byte("#!/bin/sh\n"), Mode: 0o755},
	}, &buf); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "acme-hello-1.0.0.tar.gz")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, registryURL, want string
		args                    []string
	}{
		{"text, relative", "", "    see /docs/reference/kandev-manifest#manifest.api_version.value\n", nil},
		{"text, REGISTRY_URL", "https://plugins.example.com/", "    see https://plugins.example.com/docs/reference/kandev-manifest#manifest.api_version.value\n", nil},
		{"json, REGISTRY_URL", "https://plugins.example.com", `"doc_url": "https://plugins.example.com/docs/reference/kandev-manifest#manifest.api_version.value"`, []string{"--json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := map[string]string{"REGISTRY_URL": tt.registryURL}
			c := &cli{stdout: &stdout, stderr: &stderr, stdin: strings.NewReader(""), getenv: func(k string) string { return env[k] }}
			if code := run(context.Background(), append([]string{"verify", file}, tt.args...), c); code != exitInvalid {
				t.Fatalf("exit %d, want %d; stderr %s", code, exitInvalid, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, stdout.String())
			}
		})
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pluginyard/registry/pack"
)

// TestVerifyNeverPrintsRawControls: ids, versions, paths and messages from a package are
// printed escaped when they hold ESC or bidi controls, so `registry verify` output cannot
// rewrite the author's terminal or reorder what they read.
func TestVerifyNeverPrintsRawControls(t *testing.T) {
	manifest := "id: acme-hello\napi_version: 2\nversion: \"1.0.0-\\u202Egnp.exe\\e[2J\"\ndisplay_name: Hello\ndescription: Says hello\n" +
		"author: Acme\ncategories: [tools]\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	fsys := fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: []byte("#!/bin/sh\n"), Mode: 0o755},
		"docs/\u202eevil.md":        {Data: []byte("x")},
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "acme-hello-1.0.0.tar.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runVerify(t, path)
	if code != exitInvalid {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitInvalid, stdout, stderr)
	}
	if strings.ContainsAny(stdout+stderr, "\x1b\u202e") {
		t.Errorf("output holds a raw ESC or U+202E:\n%q", stdout)
	}
	if !strings.Contains(stdout, `\u202e`) {
		t.Errorf("output does not show the control escaped:\n%s", stdout)
	}
}

func TestSafe(t *testing.T) {
	for in, want := range map[string]string{"acme-hello": "acme-hello", "a b": "a b", "é": "é", "a\x1bb": `"a\x1bb"`, "a\u202eb": `"a\u202eb"`, "a\nb": `"a\nb"`} {
		if got := safe(in); got != want {
			t.Errorf("safe(%q) = %s, want %s", in, got, want)
		}
	}
}

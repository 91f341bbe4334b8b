package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCmdLint(t *testing.T) {
	fixtures := filepath.Join("..", "..", "testdata", "index")
	official := filepath.Join(fixtures, "kandev-official-plugins.yaml")
	bad := filepath.Join(fixtures, "invalid", "bad-owner.yaml")
	warn := filepath.Join(fixtures, "warnings.yaml")
	missing := filepath.Join(t.TempDir(), "absent.yaml")
	collision := filepath.Join("..", "..", "index", "testdata", "file-id-collision.yaml")
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string // substring
	}{
		{"official list", []string{official}, exitOK, official + ": ok, 14 plugins, 0 extensions, 0 warnings\n", ""},
		{"errors and warnings", []string{bad}, exitInvalid,
			bad + `:4:14: error [registry.owners] plugins[0].owners[0]: expected a publisher name (letters, digits, '.', '_', '-', at most 64, starting with a letter or digit), found "acme corp"` + "\n" +
				bad + `:4:33: warning [registry.owners] plugins[0].owners[2]: "acme" is listed twice; remove the repetition` + "\n",
			"1 error, 1 warning\n"},
		{"every field", []string{filepath.Join(fixtures, "valid.yaml")}, exitOK,
			filepath.Join(fixtures, "valid.yaml") + ": ok, 4 plugins, 1 extension, 0 warnings\n", ""},
		{"warnings only", []string{warn}, exitOK,
			warn + `:4:25: warning [registry.categories] plugins[0].categories[1]: "tools" is listed twice; remove the repetition` + "\n" +
				warn + ": ok, 1 plugin, 0 extensions, 1 warning\n", ""},
		{"document-level problem", []string{filepath.Join(fixtures, "invalid", "empty.yaml")}, exitInvalid,
			filepath.Join(fixtures, "invalid", "empty.yaml") + ":1:1: error [registry.yaml] the file is empty; expected a mapping with a top-level plugins: list\n", ""},
		{"file id collision", []string{collision}, exitInvalid,
			collision + `:7:11: error [registry.file_id.collision] extensions[0].name: extension "@acme/hello" and plugin "acme-hello" (plugins[0].id, line 2) share the file id "acme-hello": ` +
				"both would be served at /packages/acme-hello/acme-hello-<version>.tar.gz. Rename one of them (ids and file ids must be unique across plugins and extensions)\n" +
				collision + `:11:11: error [registry.file_id.collision] extensions[2].name: extension "@acme-tools/x" and extension "@acme/tools-x" (extensions[1].name, line 9) share the file id "acme-tools-x": ` +
				"both would be served at /packages/acme-tools-x/acme-tools-x-<version>.tar.gz. Rename one of them (ids and file ids must be unique across plugins and extensions)\n",
			"2 errors, 0 warnings"},
		{"missing file", []string{missing}, exitUsage, "", "registry lint: index: load list"},
		{"two files", []string{official, bad}, exitUsage, "", "registry lint: expected at most one FILE, found 2"},
		{"unknown flag", []string{"--nope"}, exitUsage, "", "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			c := &cli{stdout: &stdout, stderr: &stderr}
			code := cmdLint(context.Background(), c, tt.args)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr: %s", code, tt.wantCode, stderr.String())
			}
			if diff := cmp.Diff(tt.wantStdout, stdout.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}

func TestCmdLintDefaultFile(t *testing.T) {
	t.Chdir(filepath.Join("..", "..", "testdata", "index", "invalid"))
	var stdout, stderr bytes.Buffer
	if code := cmdLint(context.Background(), &cli{stdout: &stdout, stderr: &stderr}, nil); code != exitUsage {
		t.Fatalf("exit %d with no plugins.yaml in the directory, want %d", code, exitUsage)
	}
	if !strings.Contains(stderr.String(), "plugins.yaml") {
		t.Errorf("stderr %q does not name plugins.yaml", stderr.String())
	}
}

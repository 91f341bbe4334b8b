package main

import (
	"bytes"
	"context"
	"fmt"
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
	syntaxFlow := filepath.Join(fixtures, "invalid", "syntax-flow.yaml")
	tab := filepath.Join(fixtures, "invalid", "syntax.yaml")
	dupID := filepath.Join(fixtures, "invalid", "duplicate-id.yaml")
	unknownCat := filepath.Join(fixtures, "invalid", "unknown-category.yaml")
	emptyOwners := filepath.Join(fixtures, "invalid", "empty-owners.yaml")
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string // substring
	}{
		{"official list", []string{official}, exitOK, officialWarnings(official) + official + ": ok, 14 plugins, 0 extensions, 4 warnings\n", ""},
		{"syntax error at its line and column", []string{syntaxFlow}, exitInvalid,
			syntaxFlow + ":5:3: error [registry.yaml] expected valid YAML, found a syntax error: ',' or ']' must be specified\n",
			"registry lint: " + syntaxFlow + ": 1 error, 0 warnings\n"},
		{"tab at its line and column", []string{tab}, exitInvalid,
			tab + ":4:1: error [registry.yaml] expected valid YAML, found a syntax error: found character '\t' that cannot start any token\n", "1 error, 0 warnings\n"},
		{"duplicate id", []string{dupID}, exitInvalid,
			dupID + `:4:9: error [registry.id.duplicate] plugins[1].id: id "acme-a" is already listed at plugins[0] (line 2); each id may appear once` + "\n",
			"1 error, 0 warnings\n"},
		{"unknown category", []string{unknownCat}, exitOK,
			unknownCat + `:4:25: warning [registry.categories.unknown] plugins[0].categories[1]: expected one of the categories Kandev hosts know (connector, automation, tools, analytics, canvas), found "integration", which their filters never show` + "\n" +
				unknownCat + `:4:38: warning [registry.categories.unknown] plugins[0].categories[2]: expected one of the categories Kandev hosts know (connector, automation, tools, analytics, canvas), found "Analytics", which their filters never show; did you mean ` + "`analytics`?\n" +
				unknownCat + ": ok, 1 plugin, 0 extensions, 2 warnings\n", ""},
		{"empty owners", []string{emptyOwners}, exitOK,
			emptyOwners + ":4:13: warning [registry.owners.empty] plugins[0].owners: expected at least one publisher name, found none: no publisher token may publish, yank or deprecate acme-a (trusted publishing from its repo still can); list the publisher names (as given to `registry token create --publisher`), or remove the field\n" +
				emptyOwners + ":8:12: warning [registry.owners.empty] extensions[0].owners: expected at least one publisher name, found none: no publisher token may publish, yank or deprecate @acme/x (trusted publishing from its repo still can); list the publisher names (as given to `registry token create --publisher`), or remove the field\n" +
				emptyOwners + ": ok, 1 plugin, 1 extension, 2 warnings\n", ""},
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

// officialWarnings are the lint lines of the official Kandev list: four entries tagged
// "integrations", a category no Kandev host filters by.
func officialWarnings(file string) string {
	var b strings.Builder
	for _, at := range []struct {
		line, entry int
	}{{40, 4}, {43, 5}, {58, 10}, {64, 12}} {
		fmt.Fprintf(&b, "%s:%d:18: warning [registry.categories.unknown] plugins[%d].categories[0]: expected one of the categories Kandev hosts know "+
			"(connector, automation, tools, analytics, canvas), found \"integrations\", which their filters never show\n", file, at.line, at.entry)
	}
	return b.String()
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

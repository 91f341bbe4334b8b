package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// verifyFixture copies a committed package into a temp dir under name, so that the
// file-name rule sees name.
func verifyFixture(t *testing.T, fixture, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "verify", fixture))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runVerify(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	c := &cli{stdout: &out, stderr: &errb, stdin: strings.NewReader(""), getenv: func(string) string { return "" }}
	code = cmdVerify(context.Background(), c, args)
	return code, out.String(), errb.String()
}

func TestVerifyJSON(t *testing.T) {
	type prob struct{ Rule, Path, File, Severity string }
	type result struct {
		OK                bool
		ID, Version, Kind string
		SHA256Len         int
		Problems          []prob
	}
	tests := []struct {
		name, fixture, file string
		code                int
		want                result
	}{
		{"valid plugin", "hello-verify-1.0.0.tar.gz", "hello-verify-1.0.0.tar.gz", exitOK,
			result{true, "hello-verify", "1.0.0", "plugin", 64, []prob{}}},
		{"valid canvas", "board-verify-2.1.0.tar.gz", "board-verify-2.1.0.tar.gz", exitOK,
			result{true, "board-verify", "2.1.0", "canvas", 64, []prob{}}},
		{"extension", "acme-curupira-ext-1.2.0.tgz", "acme-curupira-ext-1.2.0.tgz", exitOK,
			result{true, "@acme/curupira-ext", "1.2.0", "extension", 64, []prob{}}},
		{"renamed plugin", "hello-verify-1.0.0.tar.gz", "hello-verify-2.0.0.tar.gz", exitInvalid,
			result{false, "hello-verify", "1.0.0", "plugin", 64, []prob{{"package.filename", "", "", "error"}}}},
		{"tampered file", "hello-verify-1.0.0-badsums.tar.gz", "hello-verify-1.0.0.tar.gz", exitInvalid,
			result{false, "hello-verify", "1.0.0", "plugin", 64, []prob{{"checksums.mismatch", "assets/icon.png", "checksums.txt", "error"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runVerify(t, verifyFixture(t, tt.fixture, tt.file), "--json")
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tt.code, stderr)
			}
			var raw struct {
				OK                        *bool
				ID, Version, Kind, SHA256 string
				Problems                  []map[string]string
			}
			if err := json.Unmarshal([]byte(stdout), &raw); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
			}
			if raw.OK == nil || raw.Problems == nil {
				t.Fatalf("ok or problems missing (problems must be [] when empty):\n%s", stdout)
			}
			got := result{*raw.OK, raw.ID, raw.Version, raw.Kind, len(raw.SHA256), []prob{}}
			for _, p := range raw.Problems {
				if p["message"] == "" {
					t.Errorf("problem without a message: %v", p)
				}
				got.Problems = append(got.Problems, prob{p["rule"], p["path"], p["file"], p["severity"]})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVerifyText(t *testing.T) {
	code, stdout, _ := runVerify(t, verifyFixture(t, "evil-symlink-1.0.0.tar.gz", "evil-symlink-1.0.0.tar.gz"))
	if code != exitInvalid {
		t.Fatalf("exit %d, want %d", code, exitInvalid)
	}
	// Package-wide problems first, then one block per file, names in order.
	for _, want := range []string{
		"id hello-verify, version 1.0.0, kind plugin",
		"\n(package)\n  error [package.filename]",
		"\n../escape.sh\n  error [archive.path.dotdot]",
		"\nui/passwd\n  error [archive.symlink]",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.HasSuffix(stdout, ": invalid, 3 errors, 0 warnings\n") {
		t.Errorf("output does not end with the summary line:\n%s", stdout)
	}
	if strings.Index(stdout, "(package)") > strings.Index(stdout, "../escape.sh") {
		t.Errorf("package-wide problems are not first:\n%s", stdout)
	}

	code, stdout, _ = runVerify(t, verifyFixture(t, "hello-verify-1.0.0.tar.gz", "hello-verify-1.0.0.tar.gz"))
	if code != exitOK || !strings.HasSuffix(stdout, ": valid, 0 errors, 0 warnings\n") {
		t.Errorf("valid plugin: exit %d, output:\n%s", code, stdout)
	}
}

func TestVerifyUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"no file", nil, exitUsage, "registry verify: expected one package FILE, found 0 arguments (run `registry verify -h` for usage)\n"},
		{"two files", []string{"a.tar.gz", "b.tar.gz"}, exitUsage, "registry verify: expected one package FILE, found 2 arguments"},
		{"unknown flag", []string{"--yaml", "a.tar.gz"}, exitUsage, "flag provided but not defined"},
		{"missing file", []string{filepath.Join(t.TempDir(), "nope.tar.gz")}, exitUsage, "open package"},
		{"help", []string{"-h"}, exitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runVerify(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.err) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.err)
			}
		})
	}
}

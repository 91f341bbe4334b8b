package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/extension"
	"github.com/pluginyard/registry/pack"
)

// packTree writes tree (slash path → content) into a fresh directory and returns it.
func packTree(tb testing.TB, tree map[string]string) string {
	tb.Helper()
	dir := tb.TempDir()
	for p, data := range tree {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

func runPack(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	c := &cli{stdout: &out, stderr: &errb, stdin: strings.NewReader(""), getenv: func(string) string { return "" }}
	code = cmdPack(context.Background(), c, args)
	return code, out.String(), errb.String()
}

// dirNames lists the names in dir, so tests can see leftovers such as temp files.
func dirNames(tb testing.TB, dir string) []string {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestPackDefaultName(t *testing.T) {
	tests := []struct {
		name string
		tree map[string]string
		want string
	}{
		{
			name: "kandev manifest",
			tree: map[string]string{"manifest.yaml": "id: acme-board\nversion: \"1.2.3\"\n", "ui/index.html": "<p>hi</p>\n"},
			want: "acme-board-1.2.3.tar.gz",
		},
		{
			name: "scoped curupira extension",
			tree: map[string]string{"curupira-extension.toml": "manifest_version = 1\nname = \"@acme/github-issues\"\nversion = \"0.3.0\"\n"},
			want: "acme-github-issues-0.3.0.tar.gz",
		},
		{
			name: "unscoped curupira extension",
			tree: map[string]string{"curupira-extension.toml": "name = \"jira-trigger\"\nversion = \"2.0.0\"\n"},
			want: "jira-trigger-2.0.0.tar.gz",
		},
		{
			name: "manifest.yaml wins over the extension manifest",
			tree: map[string]string{"manifest.yaml": "id: a\nversion: 1.0.0\n", "curupira-extension.toml": "name = \"b\"\nversion = \"2.0.0\"\n"},
			want: "a-1.0.0.tar.gz",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := packTree(t, tt.tree)
			out := t.TempDir()
			t.Chdir(out)
			code, stdout, stderr := runPack(src)
			if code != exitOK {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if diff := cmp.Diff([]string{tt.want}, dirNames(t, out)); diff != "" {
				t.Errorf("output dir (-want +got):\n%s", diff)
			}
			got, err := os.ReadFile(filepath.Join(out, tt.want))
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := pack.Dir(src, &want); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Error("file differs from pack.Dir output")
			}
			sum := sha256.Sum256(got)
			line := fmt.Sprintf("wrote %s (%d bytes, sha256 %s)\n", tt.want, len(got), hex.EncodeToString(sum[:]))
			if stdout != line {
				t.Errorf("stdout = %q, want %q", stdout, line)
			}
		})
	}
}

func TestPackExplicitOutputIsDeterministic(t *testing.T) {
	src := packTree(t, map[string]string{"manifest.yaml": "id: x\nversion: 1.0.0\n", "server/plugin-linux-amd64": "#!/bin/sh\n"})
	out := t.TempDir()
	a, b := filepath.Join(out, "a.tar.gz"), filepath.Join(out, "b.tar.gz")
	for _, args := range [][]string{{src, "-o", a}, {"--output", b, src}} {
		if code, _, stderr := runPack(args...); code != exitOK {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if len(da) == 0 || !bytes.Equal(da, db) {
		t.Errorf("two runs wrote different bytes (%d and %d)", len(da), len(db))
	}
	info, err := os.Stat(a)
	if err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("output mode = %v (%v), want 0644", info.Mode(), err)
	}
}

func TestPackRefusals(t *testing.T) {
	const existing = "previous package bytes"
	tests := []struct {
		name     string
		tree     map[string]string
		args     func(src, out string) []string
		wantCode int
		wantErr  string
	}{
		{
			name:     "checksums.txt in DIR",
			tree:     map[string]string{"manifest.yaml": "id: x\nversion: 1.0.0\n", "checksums.txt": "stale\n"},
			args:     func(src, out string) []string { return []string{src, "-o", filepath.Join(out, "x.tar.gz")} },
			wantCode: exitInvalid,
			wantErr:  "checksums.txt already exists",
		},
		{
			name:     "checksums.txt.sig in DIR",
			tree:     map[string]string{"manifest.yaml": "id: x\nversion: 1.0.0\n", "checksums.txt.sig": "sig"},
			args:     func(src, out string) []string { return []string{src, "-o", filepath.Join(out, "x.tar.gz")} },
			wantCode: exitInvalid,
			wantErr:  "checksums.txt.sig already exists",
		},
		{
			name:     "no manifest and no -o",
			tree:     map[string]string{"README.md": "hi\n"},
			args:     func(src, out string) []string { return []string{src} },
			wantCode: exitUsage,
			wantErr:  "pass -o FILE",
		},
		{
			name:     "id that cannot name a file",
			tree:     map[string]string{"manifest.yaml": "id: ../evil\nversion: 1.0.0\n"},
			args:     func(src, out string) []string { return []string{src} },
			wantCode: exitUsage,
			wantErr:  `id "../evil" cannot name the output file`,
		},
		{
			name:     "missing version",
			tree:     map[string]string{"manifest.yaml": "id: x\n"},
			args:     func(src, out string) []string { return []string{src} },
			wantCode: exitUsage,
			wantErr:  `version ""`,
		},
		{
			name:     "output inside DIR",
			tree:     map[string]string{"manifest.yaml": "id: x\nversion: 1.0.0\n"},
			args:     func(src, out string) []string { return []string{src, "-o", filepath.Join(src, "x.tar.gz")} },
			wantCode: exitUsage,
			wantErr:  "inside",
		},
		{
			name:     "no DIR",
			args:     func(src, out string) []string { return nil },
			wantCode: exitUsage,
			wantErr:  "usage: registry pack DIR",
		},
		{
			name:     "two DIRs",
			args:     func(src, out string) []string { return []string{src, src} },
			wantCode: exitUsage,
			wantErr:  "usage: registry pack DIR",
		},
		{
			name: "DIR does not exist",
			args: func(src, out string) []string {
				return []string{filepath.Join(src, "nope"), "-o", filepath.Join(out, "x.tar.gz")}
			},
			wantCode: exitUsage,
			wantErr:  "nope",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := packTree(t, tt.tree)
			out := t.TempDir()
			t.Chdir(out)
			// A previous package at the output path must survive a failed run untouched.
			if err := os.WriteFile(filepath.Join(out, "x.tar.gz"), []byte(existing), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runPack(tt.args(src, out)...)
			if code != tt.wantCode || !strings.Contains(stderr, tt.wantErr) || stdout != "" {
				t.Errorf("exit %d stdout %q stderr %q; want exit %d and stderr containing %q", code, stdout, stderr, tt.wantCode, tt.wantErr)
			}
			if diff := cmp.Diff([]string{"x.tar.gz"}, dirNames(t, out)); diff != "" {
				t.Errorf("output dir after a failed run (-want +got):\n%s", diff)
			}
			if got, _ := os.ReadFile(filepath.Join(out, "x.tar.gz")); string(got) != existing {
				t.Errorf("existing output changed to %q", got)
			}
		})
	}
}

func TestPackHelp(t *testing.T) {
	code, _, stderr := runPack("-h")
	if code != exitOK || !strings.Contains(stderr, "usage: registry pack DIR") {
		t.Errorf("-h: exit %d stderr %q", code, stderr)
	}
}

func TestExtensionFileName(t *testing.T) {
	tests := map[string]string{
		"@acme/github-issues": "acme-github-issues",
		"github-issues":       "github-issues",
		"@acme":               "@acme",
		"acme/x":              "acme/x", // refused later by defaultPackName
	}
	for in, want := range tests {
		if got := extension.FileID(in); got != want {
			t.Errorf("extension.FileID(%q) = %q, want %q", in, got, want)
		}
	}
}

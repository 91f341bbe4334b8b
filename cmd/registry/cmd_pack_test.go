package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
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

// validPlugin is a minimal static web-app plugin that passes every verify rule.
func validPlugin(id, version string) map[string]string {
	return map[string]string{
		"manifest.yaml": "id: " + id + "\napi_version: 2\nversion: \"" + version + "\"\ndisplay_name: Acme Board\n" +
			"ui:\n  web_apps:\n    - key: main\n      title: Board\n      entry: ui/index.html\n      placements: [task-canvas]\n",
		"ui/index.html": "<!doctype html><p>hi</p>\n",
	}
}

// validExtension is a minimal Curupira extension that passes every verify rule.
func validExtension(name, version string) map[string]string {
	return map[string]string{"curupira-extension.toml": "manifest_version = 1\nname = \"" + name + "\"\nversion = \"" + version + "\"\n" +
		"protocol_version = 2\nruntime = \"node\"\nkind = \"trigger\"\ntrigger_types = [\"github-issue\"]\n\n" +
		"[launch]\ntype = \"node\"\ncommand = \"index.mjs\"\n",
		"index.mjs": "process.exit(0)\n",
	}
}

// with returns tree with the files of more added or replaced.
func with(tree map[string]string, more map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range tree {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
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
			tree: validPlugin("acme-board", "1.2.3"),
			want: "acme-board-1.2.3.tar.gz",
		},
		{
			name: "scoped curupira extension",
			tree: validExtension("@acme/github-issues", "0.3.0"),
			want: "acme-github-issues-0.3.0.tar.gz",
		},
		{
			name: "unscoped curupira extension",
			tree: validExtension("jira-trigger", "2.0.0"),
			want: "jira-trigger-2.0.0.tar.gz",
		},
		{
			name: "manifest.yaml wins over the extension manifest",
			tree: with(validPlugin("a", "1.0.0"), validExtension("b", "2.0.0")),
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
	src := packTree(t, with(validPlugin("x", "1.0.0"), map[string]string{"server/plugin-linux-amd64": "#!/bin/sh\n"}))
	a, b := filepath.Join(t.TempDir(), "x-1.0.0.tar.gz"), filepath.Join(t.TempDir(), "x-1.0.0.tgz")
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
			wantErr:  "expected one source folder DIR",
		},
		{
			name:     "two DIRs",
			args:     func(src, out string) []string { return []string{src, src} },
			wantCode: exitUsage,
			wantErr:  "expected one source folder DIR",
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
	for _, arg := range []string{"-h", "--help"} {
		code, stdout, _ := runPack(arg)
		if code != exitOK || !strings.Contains(stdout, "usage: registry pack DIR [-o FILE] [--no-verify]") || !strings.Contains(stdout, "--no-verify") {
			t.Errorf("%s: exit %d stdout %q", arg, code, stdout)
		}
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

// TestPackVerifies checks that pack refuses, with verify's rule ids, what the registry
// would refuse, and leaves nothing behind: neither the output nor a temporary file.
func TestPackVerifies(t *testing.T) {
	badID := validPlugin("NC_Greeter!", "1.0.0")
	tests := []struct {
		name     string
		tree     map[string]string
		args     func(src, out string) []string
		wantRule string
	}{
		{
			name:     "invalid id, default name",
			tree:     badID,
			args:     func(src, out string) []string { return []string{src} },
			wantRule: "[manifest.id.pattern]",
		},
		{
			name:     "-o with another id",
			tree:     validPlugin("acme-board", "1.2.3"),
			args:     func(src, out string) []string { return []string{src, "-o", filepath.Join(out, "x.tar.gz")} },
			wantRule: "error [package.filename]",
		},
		{
			name:     "-o with another version",
			tree:     validPlugin("acme-board", "1.2.3"),
			args:     func(src, out string) []string { return []string{src, "-o", "acme-board-1.2.4.tar.gz"} },
			wantRule: "error [package.filename]",
		},
		{
			name:     "-o that is not a tarball name",
			tree:     validPlugin("acme-board", "1.2.3"),
			args:     func(src, out string) []string { return []string{src, "-o", "acme-board.bin"} },
			wantRule: "error [package.filename]",
		},
		{
			name:     "-o with the unscoped extension name",
			tree:     validExtension("@acme/github-issues", "0.3.0"),
			args:     func(src, out string) []string { return []string{src, "-o", "github-issues-0.3.0.tar.gz"} },
			wantRule: "error [package.filename]",
		},
		{
			name:     "executable the manifest names is missing",
			tree:     with(validPlugin("acme-board", "1.2.3"), map[string]string{"manifest.yaml": "id: acme-board\napi_version: 2\nversion: 1.2.3\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"}),
			args:     func(src, out string) []string { return []string{src} },
			wantRule: "[manifest.runtime.executables.missing]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := packTree(t, tt.tree)
			out := t.TempDir()
			t.Chdir(out)
			code, stdout, stderr := runPack(tt.args(src, out)...)
			if code != exitInvalid || stdout != "" {
				t.Errorf("exit %d stdout %q; want exit %d and no stdout", code, stdout, exitInvalid)
			}
			if !strings.Contains(stderr, tt.wantRule) || !strings.Contains(stderr, "was not written") {
				t.Errorf("stderr %q; want rule %s and \"was not written\"", stderr, tt.wantRule)
			}
			if names := dirNames(t, out); len(names) != 0 {
				t.Errorf("files left behind: %v", names)
			}
		})
	}
}

// TestPackNoVerify checks that --no-verify writes what verification refuses.
func TestPackNoVerify(t *testing.T) {
	tests := []struct {
		name string
		tree map[string]string
		args []string
		want string
	}{
		{"invalid id", validPlugin("NC_Greeter!", "1.0.0"), nil, "NC_Greeter!-1.0.0.tar.gz"},
		{"wrong -o", validPlugin("acme-board", "1.2.3"), []string{"-o", "board.tar.gz"}, "board.tar.gz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := packTree(t, tt.tree)
			out := t.TempDir()
			t.Chdir(out)
			code, stdout, stderr := runPack(append([]string{src, "--no-verify"}, tt.args...)...)
			if code != exitOK || stderr != "" || !strings.HasPrefix(stdout, "wrote "+tt.want+" ") {
				t.Fatalf("exit %d stdout %q stderr %q", code, stdout, stderr)
			}
			if diff := cmp.Diff([]string{tt.want}, dirNames(t, out)); diff != "" {
				t.Errorf("output dir (-want +got):\n%s", diff)
			}
			if code, _, _ := runVerify(t, filepath.Join(out, tt.want)); code != exitInvalid {
				t.Errorf("verify of the --no-verify package: exit %d, want %d", code, exitInvalid)
			}
		})
	}
}

// TestPackReportIsVerifys checks that pack prints, for a package it refuses, exactly what
// `registry verify` prints for that package under the same name.
func TestPackReportIsVerifys(t *testing.T) {
	src := packTree(t, validPlugin("NC_Greeter!", "1.0.0"))
	t.Chdir(t.TempDir())
	const name = "NC_Greeter!-1.0.0.tar.gz"
	code, _, refused := runPack(src)
	if code != exitInvalid {
		t.Fatalf("pack: exit %d, stderr %q", code, refused)
	}
	if code, _, stderr := runPack(src, "--no-verify"); code != exitOK {
		t.Fatalf("pack --no-verify: exit %d, stderr %q", code, stderr)
	}
	_, report, _ := runVerify(t, name)
	if !strings.HasPrefix(refused, report) || !strings.Contains(report, "[manifest.id.pattern]") {
		t.Errorf("pack printed\n%s\nverify printed\n%s", refused, report)
	}
}

// TestPackPrintsWarnings checks that a package with warnings only is written, and the
// warnings are shown.
func TestPackPrintsWarnings(t *testing.T) {
	tree := validExtension("jira-trigger", "2.0.0")
	tree["curupira-extension.toml"] = strings.Replace(tree["curupira-extension.toml"], `runtime = "node"`, `runtime = "deno"`, 1)
	src := packTree(t, tree)
	out := t.TempDir()
	t.Chdir(out)
	code, stdout, stderr := runPack(src)
	if code != exitOK || !strings.HasPrefix(stdout, "wrote jira-trigger-2.0.0.tar.gz ") {
		t.Fatalf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "warning [extension.runtime.unknown]") || !strings.Contains(stderr, "valid, 0 errors, 1 warning") {
		t.Errorf("stderr %q; want the warning and the summary", stderr)
	}
}

// BenchmarkPack measures pack with and without the verification pass, for a plugin whose
// one large file is of each size (random bytes: gzip cannot shrink them).
func BenchmarkPack(b *testing.B) {
	for _, size := range []int{1 << 20, 8 << 20, 32 << 20} {
		data := make([]byte, size)
		_, _ = rand.NewChaCha8([32]byte{}).Read(data)
		src := packTree(b, with(validPlugin("acme-board", "1.0.0"), map[string]string{"ui/data.bin": string(data)}))
		out := filepath.Join(b.TempDir(), "acme-board-1.0.0.tar.gz")
		for _, mode := range []string{"verify", "no-verify"} {
			args := []string{src, "-o", out}
			if mode == "no-verify" {
				args = append(args, "--no-verify")
			}
			b.Run(fmt.Sprintf("%dMiB/%s", size>>20, mode), func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					if code, _, stderr := runPack(args...); code != exitOK {
						b.Fatalf("exit %d: %s", code, stderr)
					}
				}
			})
		}
	}
}

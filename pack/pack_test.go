package pack_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pluginyard/registry/pack"
)

// goldenBasic is the sha256 of the package of testdata/basic. It changes only when the
// format changes on purpose (or when Go's compress/flate changes its output, which it has
// not done in years); update it then, and say why in the commit. Checked once by hand:
// GNU tar lists 0/0, 2000-01-01, -rwxr-xr-x for server/ only, and `sha256sum -c` passes.
const goldenBasic = "4c2cd277e1baadaa0e524466bc992666ee2992cc9ce197c11180160d2f6ba090"

// entry is what a test sees of one tar entry.
type entry struct {
	Name     string
	Mode     int64
	Uid, Gid int
	Uname    string
	Gname    string
	ModTime  int64
	Type     byte
	Format   tar.Format
	Data     string
}

func mustPackDir(tb testing.TB, dir string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := pack.Dir(dir, &buf); err != nil {
		tb.Fatalf("pack.Dir(%s): %v", dir, err)
	}
	return buf.Bytes()
}

func mustRead(tb testing.TB, pkg []byte) []entry {
	tb.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(pkg))
	if err != nil {
		tb.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var out []entry
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			tb.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, entry{h.Name, h.Mode, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime.Unix(), h.Typeflag, h.Format, string(data)})
	}
}

// writeTree creates the files of tree (slash path → content) under a fresh directory.
func writeTree(tb testing.TB, tree map[string]string) string {
	tb.Helper()
	dir := tb.TempDir()
	for p, data := range tree {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestDirIsDeterministic(t *testing.T) {
	a := mustPackDir(t, "testdata/basic")
	b := mustPackDir(t, "testdata/basic")
	if !bytes.Equal(a, b) {
		t.Fatal("two packs of the same directory differ")
	}
	if got := sum(string(a)); got != goldenBasic {
		t.Errorf("sha256 of testdata/basic package = %s, want %s", got, goldenBasic)
	}
}

func TestDirIgnoresHostMetadata(t *testing.T) {
	tree := map[string]string{"manifest.yaml": "id: x\n", "server/plugin-linux-amd64": "#!/bin/sh\n"}
	a := writeTree(t, tree)
	b := writeTree(t, tree)
	// Different permissions and times on disk must not show in the package.
	if err := os.Chmod(filepath.Join(b, "manifest.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2011, 3, 4, 5, 6, 7, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(b, "server", "plugin-linux-amd64"), old, old); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustPackDir(t, a), mustPackDir(t, b)) {
		t.Error("packages differ although only disk modes and times differ")
	}
}

func TestEntries(t *testing.T) {
	files := map[string]string{}
	for _, p := range []string{".hidden", "README.md", "assets/Z.txt", "manifest.yaml", "server/plugin-linux-amd64", "ui/bundle.js"} {
		data, err := os.ReadFile(filepath.Join("testdata/basic", filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		files[p] = string(data)
	}
	order := []string{".hidden", "README.md", "assets/Z.txt", "manifest.yaml", "server/plugin-linux-amd64", "ui/bundle.js"}
	var want []entry
	var sums strings.Builder
	for _, p := range order {
		mode := int64(0o644)
		if p == "server/plugin-linux-amd64" {
			mode = 0o755
		}
		want = append(want, entry{Name: p, Mode: mode, ModTime: 946684800, Type: tar.TypeReg, Format: tar.FormatUSTAR, Data: files[p]})
		sums.WriteString(sum(files[p]) + "  " + p + "\n")
	}
	want = append(want, entry{Name: "checksums.txt", Mode: 0o644, ModTime: 946684800, Type: tar.TypeReg, Format: tar.FormatUSTAR, Data: sums.String()})

	got := mustRead(t, mustPackDir(t, "testdata/basic"))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}

func TestGzipHeaderIsFixed(t *testing.T) {
	pkg := mustPackDir(t, "testdata/basic")
	zr, err := gzip.NewReader(bytes.NewReader(pkg))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || zr.Comment != "" || !zr.ModTime.IsZero() || zr.OS != 255 || zr.Extra != nil {
		t.Errorf("gzip header = name %q comment %q mtime %v os %d extra %v; want all empty and OS 255",
			zr.Name, zr.Comment, zr.ModTime, zr.OS, zr.Extra)
	}
	// Bytes 4..7 are MTIME; byte 3 is FLG (no FNAME/FCOMMENT/FEXTRA).
	if !bytes.Equal(pkg[3:8], []byte{0, 0, 0, 0, 0}) {
		t.Errorf("gzip FLG+MTIME bytes = %v, want zeros", pkg[3:8])
	}
}

func TestModes(t *testing.T) {
	tests := []struct {
		path string
		want int64
	}{
		{"server/plugin-linux-amd64", 0o755},
		{"server/plugin-windows-amd64.exe", 0o755},
		{"server/lib/helper", 0o755},
		{"manifest.yaml", 0o644},
		{"serverless/x", 0o644},
		{"ui/server/x.js", 0o644},
		{"server", 0o644},
	}
	for _, tt := range tests {
		if got := pack.Mode(tt.path); got != tt.want {
			t.Errorf("Mode(%q) = %o, want %o", tt.path, got, tt.want)
		}
	}
}

func TestFSAndDirGiveTheSameBytes(t *testing.T) {
	mapFS := fstest.MapFS{}
	err := filepath.WalkDir("testdata/basic", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata/basic", p)
		// A mode and a time on the in-memory file must not matter either.
		mapFS[filepath.ToSlash(rel)] = &fstest.MapFile{Data: data, Mode: 0o600, ModTime: time.Now()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var viaFS bytes.Buffer
	if err := pack.FS(mapFS, &viaFS); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(viaFS.Bytes(), mustPackDir(t, "testdata/basic")) {
		t.Error("pack.FS and pack.Dir give different bytes for the same tree")
	}
}

func TestLongAndNonASCIIPaths(t *testing.T) {
	long := "ui/" + strings.Repeat("d", 90) + "/" + strings.Repeat("f", 90) + ".js" // needs the USTAR prefix field
	tree := map[string]string{"manifest.yaml": "id: x\n", long: "1", "assets/café.txt": "2"}
	got := mustRead(t, mustPackDir(t, writeTree(t, tree)))
	var names []string
	for _, e := range got {
		names = append(names, e.Name)
		if e.Name == long && e.Format != tar.FormatUSTAR {
			t.Errorf("%s: format %v, want USTAR", e.Name, e.Format)
		}
	}
	want := []string{"assets/café.txt", "manifest.yaml", long, "checksums.txt"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

func TestNestedChecksumsFileIsOrdinary(t *testing.T) {
	tree := map[string]string{"manifest.yaml": "id: x\n", "docs/checksums.txt": "not ours\n"}
	got := mustRead(t, mustPackDir(t, writeTree(t, tree)))
	if len(got) != 3 || got[0].Name != "docs/checksums.txt" || got[2].Name != "checksums.txt" {
		t.Errorf("entries = %+v; want docs/checksums.txt packed as a file and checksums.txt last", got)
	}
}

func TestRefusals(t *testing.T) {
	tests := []struct {
		name  string
		tree  map[string]string
		setup func(t *testing.T, dir string)
		want  []string // substrings of the error
	}{
		{
			name: "checksums.txt present",
			tree: map[string]string{"manifest.yaml": "id: x\n", "checksums.txt": "old\n"},
			want: []string{"checksums.txt already exists", "delete it"},
		},
		{
			name: "checksums.txt.sig present",
			tree: map[string]string{"manifest.yaml": "id: x\n", "checksums.txt.sig": "sig"},
			want: []string{"checksums.txt.sig already exists", "delete it"},
		},
		{
			name: "both reported at once",
			tree: map[string]string{"manifest.yaml": "id: x\n", "checksums.txt": "a", "checksums.txt.sig": "b"},
			want: []string{"checksums.txt already exists", "checksums.txt.sig already exists"},
		},
		{
			name: "symlink",
			tree: map[string]string{"manifest.yaml": "id: x\n"},
			setup: func(t *testing.T, dir string) {
				if err := os.Symlink("manifest.yaml", filepath.Join(dir, "link.yaml")); err != nil {
					t.Skipf("cannot create a symlink here: %v", err)
				}
			},
			want: []string{"link.yaml is a symlink"},
		},
		{
			name: "symlink to a directory",
			tree: map[string]string{"manifest.yaml": "id: x\n", "real/a.txt": "a"},
			setup: func(t *testing.T, dir string) {
				if err := os.Symlink("real", filepath.Join(dir, "ui")); err != nil {
					t.Skipf("cannot create a symlink here: %v", err)
				}
			},
			want: []string{"ui is a symlink"},
		},
		{
			name: "backslash in a name",
			tree: map[string]string{"manifest.yaml": "id: x\n", `ui\bundle.js`: "x"},
			want: []string{"backslash"},
		},
		{
			name: "newline in a name",
			tree: map[string]string{"manifest.yaml": "id: x\n", "bad\nname": "x"},
			want: []string{"control character"},
		},
		{
			name: "a repository's .git folder",
			tree: map[string]string{"manifest.yaml": "id: x\n", ".git/config": "[remote]\n", ".git/HEAD": "ref\n", ".github/workflows/release.yml": "on: push\n"},
			want: []string{".git is Git metadata", "git archive HEAD"},
		},
		{
			name: "a worktree's .git file, deeper down",
			tree: map[string]string{"manifest.yaml": "id: x\n", "vendor/lib/.git": "gitdir: /elsewhere\n"},
			want: []string{"vendor/lib/.git is Git metadata"},
		},
		{
			name: "nothing to pack",
			tree: map[string]string{},
			setup: func(t *testing.T, dir string) {
				if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"no files to pack"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, tt.tree)
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			var buf bytes.Buffer
			err := pack.Dir(dir, &buf)
			if err == nil {
				t.Fatal("pack.Dir succeeded, want an error")
			}
			if !errors.Is(err, pack.ErrInvalidTree) {
				t.Errorf("error %v does not wrap ErrInvalidTree", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %d bytes before refusing; want none", buf.Len())
			}
		})
	}
}

func TestDirErrors(t *testing.T) {
	file := filepath.Join(writeTree(t, map[string]string{"f": "x"}), "f")
	tests := []struct {
		name    string
		dir     string
		invalid bool
	}{
		{"missing", filepath.Join(t.TempDir(), "nope"), false},
		{"a file", file, true},
	}
	for _, tt := range tests {
		err := pack.Dir(tt.dir, io.Discard)
		if err == nil {
			t.Errorf("%s: pack.Dir succeeded", tt.name)
			continue
		}
		if errors.Is(err, pack.ErrInvalidTree) != tt.invalid {
			t.Errorf("%s: errors.Is(ErrInvalidTree) = %v, want %v (%v)", tt.name, !tt.invalid, tt.invalid, err)
		}
	}
}

func TestTreeErrorListsEveryEntry(t *testing.T) {
	dir := writeTree(t, map[string]string{"manifest.yaml": "id: x\n", "checksums.txt": "a", "checksums.txt.sig": "b", `a\b`: "c"})
	err := pack.Dir(dir, io.Discard)
	var te *pack.TreeError
	if !errors.As(err, &te) {
		t.Fatalf("error %v is not a *pack.TreeError", err)
	}
	want := []string{
		`"a\\b" contains a backslash, which hosts refuse; rename it`,
		"checksums.txt already exists; pack generates it: delete it and pack again",
		"checksums.txt.sig already exists; a signature is made over the generated checksums.txt after packing: delete it and pack again",
	}
	if diff := cmp.Diff(want, te.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(err.Error(), "pack "+dir+": 3 entries cannot be packed:\n  ") {
		t.Errorf("error text = %q", err)
	}
}

// TestGitFolderIsOneProblem checks that a .git folder is refused once, not once per file
// of the repository's history.
func TestGitFolderIsOneProblem(t *testing.T) {
	dir := writeTree(t, map[string]string{"manifest.yaml": "id: x\n", ".git/config": "c", ".git/objects/ab/cdef": "o", ".git/HEAD": "h"})
	err := pack.Dir(dir, io.Discard)
	var te *pack.TreeError
	if !errors.As(err, &te) {
		t.Fatalf("pack.Dir: %v, want a *TreeError", err)
	}
	if len(te.Problems) != 1 || !strings.HasPrefix(te.Problems[0], ".git is Git metadata") {
		t.Errorf("problems %q, want one about .git", te.Problems)
	}
}

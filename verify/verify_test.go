package verify_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/verify"
)

func mustPackage(tb testing.TB, data []byte, opt verify.Options) *verify.Report {
	tb.Helper()
	rep, err := verify.Package(context.Background(), bytes.NewReader(data), opt)
	if err != nil {
		tb.Fatalf("Package: %v", err)
	}
	return rep
}

// finding is the part of a problem the tables compare.
type finding struct {
	Rule, File string
	Severity   problem.Severity
}

func e(rule, file string) finding { return finding{rule, file, problem.Error} }
func w(rule, file string) finding { return finding{rule, file, problem.Warning} }

// ownFindings keeps the problems this package reports (archive, checksums, file name),
// so that the tables do not depend on the manifest package's own rules.
func ownFindings(l problem.List) []finding {
	var out []finding
	for _, p := range l {
		if strings.HasPrefix(p.Rule, "archive.") || strings.HasPrefix(p.Rule, "checksums.") || strings.HasPrefix(p.Rule, "package.") {
			out = append(out, finding{p.Rule, p.File, p.Severity})
		}
	}
	return out
}

var sortFindings = cmpopts.SortSlices(func(a, b finding) bool {
	if a.Rule != b.Rule {
		return a.Rule < b.Rule
	}
	return a.File < b.File
})

func TestValidPackages(t *testing.T) {
	tests := []struct {
		name              string
		entries           []entry
		opt               verify.Options
		kind, id, version string
		files             []string
		icon, readme      bool
	}{
		{"plugin", validPlugin(t), verify.Options{FileName: "hello-verify-1.0.0.tar.gz"}, "plugin", "hello-verify", "1.0.0",
			[]string{"README.md", "assets/icon.png", "checksums.txt", "manifest.yaml", "server/plugin-linux-amd64"}, true, true},
		{"plugin with ./ prefixes and directory entries", dotSlash(append([]entry{dir("./"), dir("./assets/"), dir("./server/")}, validPlugin(t)...)), verify.Options{}, "plugin", "hello-verify", "1.0.0",
			[]string{"README.md", "assets/icon.png", "checksums.txt", "manifest.yaml", "server/plugin-linux-amd64"}, true, true},
		{"plugin with PAX comment records", paxComment(validPlugin(t)), verify.Options{}, "plugin", "hello-verify", "1.0.0",
			[]string{"README.md", "assets/icon.png", "checksums.txt", "manifest.yaml", "server/plugin-linux-amd64"}, true, true},
		{"canvas", validCanvas(t), verify.Options{FileName: "board-verify-2.1.0.tar.gz"}, "canvas", "board-verify", "2.1.0",
			[]string{"README.md", "assets/icon.png", "checksums.txt", "manifest.yaml", "ui/board.js", "ui/index.html"}, true, true},
		{"npm-style extension, scoped name", npmExtension(), verify.Options{FileName: "acme-curupira-ext-1.2.0.tgz"}, "extension", "@acme/curupira-ext", "1.2.0",
			[]string{"package/README.md", "package/checksums.txt", "package/curupira-extension.toml", "package/index.js", "package/package.json"}, false, true},
		{"extension at the root without checksums.txt", rootExtension(), verify.Options{FileName: "acme-ext-1.2.0.tar.gz"}, "extension", "acme-ext", "1.2.0",
			[]string{"curupira-extension.toml", "index.js"}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := buildTarGz(t, tt.entries)
			rep := mustPackage(t, data, tt.opt)
			if !rep.OK() {
				t.Fatalf("want a valid package, got problems:\n%v", rep.Problems)
			}
			sum := sha256.Sum256(data)
			got := []any{rep.Kind, rep.ID, rep.Version, rep.SHA256, rep.Size, sortedNames(rep.Files), rep.Icon != nil, rep.README != nil}
			want := []any{tt.kind, tt.id, tt.version, hex.EncodeToString(sum[:]), int64(len(data)), tt.files, tt.icon, tt.readme}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			wantSums := contentOf(tt.entries, "checksums.txt") + contentOf(tt.entries, "./checksums.txt") + contentOf(tt.entries, "package/checksums.txt")
			if string(rep.Checksums) != wantSums {
				t.Errorf("Checksums = %q, want the checksums.txt bytes %q", rep.Checksums, wantSums)
			}
		})
	}
}

func TestReportContent(t *testing.T) {
	icon := pngIcon(t)
	rep := mustPackage(t, buildTarGz(t, validPlugin(t)), verify.Options{})
	wantIcon := &verify.Asset{Path: "assets/icon.png", ContentType: "image/png", Ext: ".png", SHA256: digest(icon), Data: []byte(icon)}
	if diff := cmp.Diff(wantIcon, rep.Icon); diff != "" {
		t.Errorf("Icon (-want +got):\n%s", diff)
	}
	if got, want := string(rep.README), "# Hello Verify\n\nSays hello.\n"; got != want {
		t.Errorf("README = %q, want %q", got, want)
	}
	f := rep.Files["server/plugin-linux-amd64"]
	if diff := cmp.Diff([]any{int64(21), "#!/bin/sh\necho hello\n"}, []any{f.Size, string(f.Head)}); diff != "" {
		t.Errorf("Files entry (-want +got):\n%s", diff)
	}
	if rep.Manifest == nil || rep.Manifest.ID != "hello-verify" {
		t.Errorf("Manifest = %+v, want the parsed manifest", rep.Manifest)
	}
}

func TestHeadIsFirst512Bytes(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 4096) // 64 KiB
	rep := mustPackage(t, buildTarGz(t, withChecksums("", append(pluginFiles(t), file("ui/big.js", big))...)), verify.Options{})
	f := rep.Files["ui/big.js"]
	if f.Size != int64(len(big)) || string(f.Head) != big[:512] {
		t.Errorf("ui/big.js: size %d head %d bytes, want size %d and the first 512 bytes", f.Size, len(f.Head), len(big))
	}
}

func sortedNames[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contentOf(entries []entry, name string) string {
	for _, en := range entries {
		if en.Name == name {
			return en.Body
		}
	}
	return ""
}

// paxComment gives every entry a PAX "comment" record, which POSIX tells readers to
// ignore and the reader therefore allows.
func paxComment(entries []entry) []entry {
	out := make([]entry, len(entries))
	for i, en := range entries {
		en.PAX = map[string]string{"comment": "built by a test"}
		out[i] = en
	}
	return out
}

// dotSlash prefixes every entry name with "./", as `tar -C dir .` writes them.
func dotSlash(entries []entry) []entry {
	out := make([]entry, len(entries))
	for i, en := range entries {
		if !strings.HasPrefix(en.Name, "./") {
			en.Name = "./" + en.Name
		}
		out[i] = en
	}
	return out
}

func TestInputErrors(t *testing.T) {
	data := buildTarGz(t, validPlugin(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := verify.Package(ctx, bytes.NewReader(data), verify.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v, want context.Canceled", err)
	}
	boom := errors.New("disk on fire")
	r := io2(bytes.NewReader(data[:len(data)/2]), boom)
	if _, err := verify.Package(context.Background(), r, verify.Options{}); !errors.Is(err, boom) {
		t.Errorf("failing reader: err = %v, want it wrapped", err)
	}
}

// failingReader returns err once r is exhausted.
type failingReader struct {
	r   *bytes.Reader
	err error
}

func io2(r *bytes.Reader, err error) *failingReader { return &failingReader{r, err} }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.r.Len() == 0 {
		return 0, f.err
	}
	return f.r.Read(p)
}

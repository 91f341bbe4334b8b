package verify_test

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/gzip"

	"github.com/pluginyard/registry/examples"
	"github.com/pluginyard/registry/verify"
)

// extractor unpacks the package file pkg into the empty folder dir.
type extractor struct {
	name string
	tool string // the command it needs, "" for none
	run  func(tb testing.TB, pkg, dir string) error
}

var extractors = []extractor{
	{"gnu-tar", "tar", func(_ testing.TB, pkg, dir string) error { return command("tar", "-xzf", pkg, "-C", dir) }},
	{"bsdtar", "bsdtar", func(_ testing.TB, pkg, dir string) error { return command("bsdtar", "-xzf", pkg, "-C", dir) }},
	{"python-tarfile", "python3", func(_ testing.TB, pkg, dir string) error { return command("python3", "-c", pythonExtract, pkg, dir) }},
	{"go-archive-tar", "", goExtract},
}

// pythonExtract runs tarfile's extractall without the extraction filters of newer Pythons,
// so that what is compared is tarfile's reading of the archive, not its safety policy.
const pythonExtract = `import sys, tarfile
kw = {"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}
with tarfile.open(sys.argv[1]) as t:
    t.extractall(sys.argv[2], **kw)
`

func command(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return errors.New(name + ": " + err.Error() + ": " + string(out))
	}
	return nil
}

// needTool skips without the tool, except under CI=true, where .ci/run installs it and a
// missing tool means the differential test did not run: a failure.
func needTool(tb testing.TB, tool string) {
	tb.Helper()
	if tool == "" {
		return
	}
	if _, err := exec.LookPath(tool); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is not installed; with CI=true the differential archive test must run (.ci/run installs it)", tool)
		}
		tb.Skipf("%s is not installed; skipping it (with CI=true this fails)", tool)
	}
}

// goExtract unpacks with archive/tar as a careful Go host would: files and directories only.
func goExtract(_ testing.TB, pkg, dir string) error {
	f, err := os.Open(pkg)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if !filepath.IsLocal(hdr.Name) {
			return errors.New("non-local name " + hdr.Name)
		}
		target := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		switch hdr.Typeflag {
		case tar.TypeXGlobalHeader:
			// archive/tar returns it as an entry; a Go host skips it.
		case tar.TypeDir:
			err = os.MkdirAll(target, 0o755)
		case tar.TypeReg:
			err = writeFile(target, tr)
		default:
			err = errors.New("unexpected entry type " + string(hdr.Typeflag) + " for " + hdr.Name)
		}
		if err != nil {
			return err
		}
	}
}

func writeFile(target string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	out, err := os.Create(target)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// extracted returns the sha256 of every regular file under dir, by slash path; anything
// that is neither a file nor a directory is an error.
func extracted(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if !d.Type().IsRegular() {
			tb.Errorf("extracted %s is not a regular file (%v)", rel, d.Type())
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		got[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return got
}

type accepted struct {
	name string
	data []byte
}

// acceptedPackages are every package the reader accepts that the tests can find or build:
// the builders' valid packages, the committed valid fixtures, the examples packed by the
// pack tool, tricky-but-valid encodings (long names as PAX path and as GNU long names,
// non-ASCII names, directory entries, a tar split over two gzip members), and packages
// made by GNU tar and bsdtar themselves when installed.
func acceptedPackages(tb testing.TB) []accepted {
	long := "docs/" + strings.Repeat("very-long-folder-name/", 12) + "guide.md"
	tricky := func(format tar.Format) []entry {
		es := withChecksums("", append(pluginFiles(tb), file(long, "long\n"), file("docs/café-ü.md", "unicode\n"), dir("docs/"))...)
		for i := range es {
			es[i].Format = format
		}
		return es
	}
	whole := buildTar(tb, validCanvas(tb))
	out := []accepted{
		{"plugin", buildTarGz(tb, validPlugin(tb))},
		{"canvas", buildTarGz(tb, validCanvas(tb))},
		{"npm-extension", buildTarGz(tb, npmExtension())},
		{"root-extension", buildTarGz(tb, rootExtension())},
		{"dot-slash-and-directories", buildTarGz(tb, dotSlash(append([]entry{dir("./"), dir("./assets/"), dir("./server/")}, validPlugin(tb)...)))},
		{"pax-comment-records", buildTarGz(tb, paxComment(validPlugin(tb)))},
		{"long-and-unicode-names-pax", buildTarGz(tb, tricky(tar.FormatPAX))},
		{"long-names-gnu", buildTarGz(tb, tricky(tar.FormatGNU))},
		{"two-gzip-members", append(gz(tb, whole[:1536]), gz(tb, whole[1536:])...)},
		{"empty-last-gzip-member", append(gz(tb, whole), gz(tb, nil)...)},
	}
	for _, name := range []string{"hello-verify-1.0.0.tar.gz", "board-verify-2.1.0.tar.gz", "acme-curupira-ext-1.2.0.tgz"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "verify", name))
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, accepted{"committed/" + name, data})
	}
	for _, name := range examples.Names() {
		var buf bytes.Buffer
		if err := examples.Pack(name, &buf); err != nil {
			tb.Fatal(err)
		}
		out = append(out, accepted{"examples/" + name, buf.Bytes()})
	}
	return append(out, toolBuilt(tb)...)
}

// toolBuilt packs a valid plugin tree with the tar tools an author would use.
func toolBuilt(tb testing.TB) []accepted {
	src := tb.TempDir()
	for _, f := range validPlugin(tb) {
		if err := writeFile(filepath.Join(src, f.Name), strings.NewReader(f.Body)); err != nil {
			tb.Fatal(err)
		}
	}
	var out []accepted
	for _, b := range []struct {
		name, tool string
		args       []string
	}{
		{"gnu-tar-default", "tar", []string{"-czf"}},
		{"gnu-tar-posix", "tar", []string{"--format=posix", "-czf"}},
		{"gnu-tar-ustar", "tar", []string{"--format=ustar", "-czf"}},
		{"bsdtar-default", "bsdtar", []string{"-czf"}},
	} {
		if _, err := exec.LookPath(b.tool); err != nil {
			continue // needTool reports it once per extractor
		}
		pkg := filepath.Join(tb.TempDir(), b.name+".tar.gz")
		if err := command(b.tool, append(b.args, pkg, "-C", src, ".")...); err != nil {
			tb.Fatal(err)
		}
		data, err := os.ReadFile(pkg)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, accepted{"built-by/" + b.name, data})
	}
	return out
}

// TestExtractorsAgreeWithTheReport extracts every accepted package with GNU tar, bsdtar,
// Python's tarfile and archive/tar and checks that each produces exactly the files and
// bytes the verifier checked (Report.Digests): no file more, none less, none different.
func TestExtractorsAgreeWithTheReport(t *testing.T) {
	for _, pkg := range acceptedPackages(t) {
		rep := mustPackage(t, pkg.data, verify.Options{})
		if !rep.OK() {
			t.Errorf("%s: fixture is not accepted: %v", pkg.name, rep.Problems)
			continue
		}
		if len(rep.Digests) != len(rep.Files) {
			t.Errorf("%s: %d digests for %d files", pkg.name, len(rep.Digests), len(rep.Files))
		}
		path := filepath.Join(t.TempDir(), "pkg.tar.gz")
		if err := os.WriteFile(path, pkg.data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, x := range extractors {
			t.Run(pkg.name+"/"+x.name, func(t *testing.T) {
				needTool(t, x.tool)
				dir := t.TempDir()
				if err := x.run(t, path, dir); err != nil {
					t.Fatalf("extract: %v", err)
				}
				if diff := cmp.Diff(rep.Digests, extracted(t, dir)); diff != "" {
					t.Errorf("files and sha256 (-verified +extracted):\n%s", diff)
				}
			})
		}
	}
}

// TestHostileArchivesSplitExtractors shows why the header rules refuse what they refuse:
// on each of these archives the four extractors do not all produce the same files, so no
// single reading the verifier could check would be what every host installs.
func TestHostileArchivesSplitExtractors(t *testing.T) {
	split := map[string]bool{"archive.pax.global-path": true, "archive.header.extended-two-pax": true, "archive.header.extended-pax-and-gnu": true, "archive.header.prefix-gnu": true, "archive.header.prefix-star": true}
	for _, tt := range hostile(t) {
		if !split[tt.name] {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "pkg.tar.gz")
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			readings := map[string][]string{}
			for _, x := range extractors {
				needTool(t, x.tool)
				dir := t.TempDir()
				got := "refused"
				if err := x.run(t, path, dir); err == nil {
					got = fmt.Sprint(extracted(t, dir))
				}
				readings[got] = append(readings[got], x.name)
			}
			if len(readings) < 2 {
				t.Errorf("all extractors read the archive the same way (%v); the rule refusing it would not be needed", readings)
			}
		})
	}
}

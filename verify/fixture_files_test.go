package verify_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/verify"
)

var update = flag.Bool("update", false, "rewrite the committed fixtures in testdata/verify")

// TestCommittedFixtures reads the packages committed under testdata/verify, as the
// server and `registry verify` read files: from disk, named by their base name. With
// -update it first rewrites them from the builders in fixtures_test.go.
func TestCommittedFixtures(t *testing.T) {
	dir := filepath.Join("..", "testdata", "verify")
	tests := []struct {
		file    string
		entries func() []entry
		kind    string
		want    []finding
	}{
		{"hello-verify-1.0.0.tar.gz", func() []entry { return validPlugin(t) }, "plugin", nil},
		{"board-verify-2.1.0.tar.gz", func() []entry { return validCanvas(t) }, "canvas", nil},
		{"acme-curupira-ext-1.2.0.tgz", npmExtension, "extension", nil},
		{"evil-symlink-1.0.0.tar.gz", func() []entry {
			return plus(t, entry{Name: "ui/passwd", Type: '2', Link: "/etc/passwd"}, file("../escape.sh", "rm -rf ~\n"))
		}, "plugin", []finding{e("archive.symlink", "ui/passwd"), e("archive.path.dotdot", "../escape.sh"), e("package.filename", "")}},
		{"hello-verify-1.0.0-badsums.tar.gz", func() []entry {
			es := validPlugin(t)
			es[2].Body += "tampered"
			return es
		}, "plugin", []finding{e("checksums.mismatch", "checksums.txt"), e("package.filename", "")}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join(dir, tt.file)
			if *update {
				if err := os.WriteFile(path, buildTarGz(t, tt.entries()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rep, err := verify.Package(context.Background(), f, verify.Options{FileName: filepath.Base(path)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ownFindings(rep.Problems), sortFindings); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nall: %v", diff, rep.Problems)
			}
			if rep.Kind != tt.kind {
				t.Errorf("Kind = %q, want %q", rep.Kind, tt.kind)
			}
		})
	}
}

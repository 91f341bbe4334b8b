package verify_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/verify"
)

// TestChangelogKept checks CHANGELOG.md is kept beside README.md up to 1 MiB, and a larger
// one is dropped with a warning that names its size and the limit, the package still valid.
func TestChangelogKept(t *testing.T) {
	const limit = 1 << 20
	atLimit := strings.Repeat("x\n", limit/2)
	over := atLimit + "y"
	npm := func(changelog string) []entry {
		files := npmExtension()[:4]
		return withChecksums("package/", append(files, file("package/CHANGELOG.md", changelog))...)
	}
	tests := []struct {
		name    string
		entries []entry
		want    string // the kept changelog
		rules   []string
	}{
		{"plugin", withChecksums("", append(pluginFiles(t), file("CHANGELOG.md", "## 1.0.0\n"))...), "## 1.0.0\n", nil},
		{"at the limit", withChecksums("", append(pluginFiles(t), file("CHANGELOG.md", atLimit))...), atLimit, nil},
		{"over the limit", withChecksums("", append(pluginFiles(t), file("CHANGELOG.md", over))...), "", []string{"archive.changelog.size"}},
		{"after 8 MiB of small files", withChecksums("", append(append(pluginFiles(t), filler(8)...), file("CHANGELOG.md", "## 1.0.0\n"))...), "## 1.0.0\n", nil},
		{"none", validPlugin(t), "", nil},
		{"npm-style extension", npm("## 1.2.0\n"), "## 1.2.0\n", nil},
		{"npm-style extension over the limit", npm(over), "", []string{"archive.changelog.size"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := mustPackage(t, buildTarGz(t, tt.entries), verify.Options{})
			if !rep.OK() {
				t.Fatalf("problems: %v", rep.Problems)
			}
			if string(rep.Changelog) != tt.want || (tt.want == "") != (rep.Changelog == nil) {
				t.Errorf("Changelog = %d bytes, want %d", len(rep.Changelog), len(tt.want))
			}
			if diff := cmp.Diff(tt.rules, rep.Problems.Warnings().Rules()); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if w := rep.Problems.Warnings(); tt.rules != nil && len(w) > 0 {
				msg := w[0].Message
				if !strings.Contains(msg, "1.0 MiB (1 048 577 bytes)") || !strings.Contains(msg, "at most 1 MiB") {
					t.Errorf("message %q does not name the size and the limit", msg)
				}
			}
		})
	}
}

// filler is n files of 1 MiB each: what the reader keeps of small files that may be images
// (8 MiB) is used up by them, which must not cost the changelog its place.
func filler(n int) []entry {
	var out []entry
	for i := range n {
		out = append(out, file(fmt.Sprintf("assets/filler-%d.bin", i), strings.Repeat(string(rune('a'+i)), 1<<20)))
	}
	return out
}

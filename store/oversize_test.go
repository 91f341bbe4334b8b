package store_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/pluginyard/registry/readme"
	"github.com/pluginyard/registry/store"
)

// amplifying is a few hundred KB of Markdown (a 2 KB gzip) whose HTML is about 100 MB.
func amplifying(heading string) []byte {
	return []byte(heading + "[a]: https://example.com/" + strings.Repeat("x", 2000) + "\n\n" + strings.Repeat("[a] ", 50_000) + "\n")
}

// TestOversizeHTMLIsNotStored: a README or CHANGELOG.md whose HTML is longer than
// readme.MaxHTML is stored as the short notice, with its file's truncated warning naming
// the Markdown's size and the limit; release notes over MaxNotesHTML become a notice too.
func TestOversizeHTMLIsNotStored(t *testing.T) {
	tests := []struct {
		name string
		set  func(*store.Release, []byte) error
		md   []byte
		file string
		rule string
		html func(*store.Release) []byte
	}{
		{"README", (*store.Release).SetREADME, amplifying(""), "README.md", store.RuleREADMETruncated, func(r *store.Release) []byte { return r.READMEHTML }},
		{"CHANGELOG", (*store.Release).SetChangelog, amplifying(""), "CHANGELOG.md", store.RuleChangelogTruncated, func(r *store.Release) []byte { return r.ChangelogHTML }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &store.Release{PackageID: "acme", Version: "1.0.0"}
			if err := tc.set(r, tc.md); err != nil {
				t.Fatal(err)
			}
			want := string(readme.OversizeNotice(tc.file, len(tc.md), readme.MaxHTML))
			if got := string(tc.html(r)); got != want {
				t.Errorf("stored HTML %.200q (%d bytes), want the notice %q", got, len(got), want)
			}
			if len(r.Warnings) != 1 || r.Warnings[0].Rule != tc.rule || r.Warnings[0].File != tc.file ||
				!strings.Contains(r.Warnings[0].Message, strconv.Itoa(len(tc.md))) || !strings.Contains(r.Warnings[0].Message, strconv.Itoa(readme.MaxHTML)) {
				t.Errorf("warnings %+v, want one %s on %s naming %d bytes and the %d-byte limit", r.Warnings, tc.rule, tc.file, len(tc.md), readme.MaxHTML)
			}
		})
	}
	t.Run("README marks the facts", func(t *testing.T) {
		r := &store.Release{PackageID: "acme", Version: "1.0.0"}
		if err := r.SetREADME(amplifying("")); err != nil {
			t.Fatal(err)
		}
		if !r.Facts.READMETruncated {
			t.Error("Facts.READMETruncated is false for a README shown as a notice")
		}
	})
	t.Run("release notes", func(t *testing.T) {
		notes := "## 1.0.0\n\n[a]: https://example.com/" + strings.Repeat("x", 2000) + "\n\n" + strings.Repeat("[a] ", 3000) + "\n"
		r := &store.Release{PackageID: "acme", Version: "1.0.0"}
		if err := r.SetChangelog([]byte(notes)); err != nil {
			t.Fatal(err)
		}
		if len(r.NotesHTML) > store.MaxNotesHTML || !strings.Contains(string(r.NotesHTML), readme.OversizeClass) {
			t.Errorf("notes HTML %.200q (%d bytes), want the notice under %d bytes", r.NotesHTML, len(r.NotesHTML), store.MaxNotesHTML)
		}
	})
}

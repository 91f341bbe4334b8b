package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/readme"
	"github.com/pluginyard/registry/store"
)

func TestChangelogSection(t *testing.T) {
	keep := "# Changelog\n\n## [Unreleased]\n\n- Next.\n\n## [1.2.0] - 2026-11-30\n\n### Added\n\n- Waves.\n\n## [1.1.0] - 2026-10-01\n\n- Older.\n"
	tests := []struct {
		name, markdown, version string
		want                    string // "" for nil
	}{
		{"keep a changelog", keep, "1.2.0", "### Added\n\n- Waves."},
		{"last section runs to the end", keep, "1.1.0", "- Older."},
		{"no heading names the version", keep, "1.3.0", ""},
		{"v prefix in the heading", "## v2.0.0\n\nBig.\n", "2.0.0", "Big."},
		{"v prefix in the version", "## 2.0.0\n\nBig.\n", "v2.0.0", "Big."},
		{"link and emphasis around it", "## [**1.0.0**](https://example.com/1.0.0), 2026\nNotes\n", "1.0.0", "Notes"},
		{"prerelease is not its release", "## 1.0.0-rc.1\n\nRC.\n\n## 1.0.0\n\nFinal.\n", "1.0.0", "Final."},
		{"first version word decides", "## 1.2.0 (since 1.1.0)\n\nNew.\n\n## 1.1.0\n\nOld.\n", "1.1.0", "Old."},
		{"deeper headings stay inside", "## 1.0.0\n\n### Fixed\n\nx\n\n#### 0.9.0 regression\n\ny\n\n## 0.9.0\n\nz\n", "1.0.0", "### Fixed\n\nx\n\n#### 0.9.0 regression\n\ny"},
		{"a higher heading ends it", "### 1.0.0\n\nx\n\n# Archive\n\ny\n", "1.0.0", "x"},
		{"headings in fenced code are text", "## 1.0.0\n\n```md\n## 0.9.0\n```\n\nafter\n\n## 0.9.0\n\nold\n", "1.0.0", "```md\n## 0.9.0\n```\n\nafter"},
		{"a fenced heading is not a match", "```\n## 1.0.0\n```\n\n## 1.0.0\n\nreal\n", "1.0.0", "real"},
		{"tilde fence", "~~~\n## 1.0.0\n~~~\n", "1.0.0", ""},
		{"empty section", "## 1.0.0\n\n## 0.9.0\n\nx\n", "1.0.0", ""},
		{"hashtag is not a heading", "#1.0.0\n\nx\n", "1.0.0", ""},
		{"indented code is not a heading", "    ## 1.0.0\n\nx\n", "1.0.0", ""},
		{"CRLF lines", "## 1.0.0\r\n\r\nWindows.\r\n\r\n## 0.9.0\r\n", "1.0.0", "Windows."},
		{"empty version", "## Notes\n\nx\n", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := store.ChangelogSection([]byte(tt.markdown), tt.version)
			if tt.want == "" {
				if got != nil {
					t.Errorf("got %q, want nil", got)
				}
				return
			}
			if string(got) != tt.want {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestSetChangelog(t *testing.T) {
	r := &store.Release{PackageID: "acme", Version: "1.0.0"}
	if err := r.SetChangelog([]byte("# Changelog\n\n## 1.0.0\n\n- <b>First</b> <script>x()</script>\n")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(r.ChangelogHTML), "<h3>Changelog</h3>") || strings.Contains(string(r.ChangelogHTML), "<script") {
		t.Errorf("changelog html = %q, want rendered and sanitized", r.ChangelogHTML)
	}
	if got := string(r.NotesHTML); got != "<ul>\n<li><b>First</b> </li>\n</ul>\n" {
		t.Errorf("notes html = %q", got)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("warnings %v", r.Warnings)
	}

	none := &store.Release{PackageID: "acme", Version: "1.0.0"}
	if err := none.SetChangelog(nil); err != nil || none.ChangelogHTML != nil || none.NotesHTML != nil {
		t.Errorf("no CHANGELOG.md: %v %q %q", err, none.ChangelogHTML, none.NotesHTML)
	}
}

func TestSetChangelogCuts(t *testing.T) {
	line := "- " + strings.Repeat("x", 98) + "\n"
	t.Run("notes", func(t *testing.T) {
		md := "## 1.0.0\n\n" + strings.Repeat(line, store.MaxNotes/len(line)+10)
		r := &store.Release{PackageID: "acme", Version: "1.0.0"}
		if err := r.SetChangelog([]byte(md)); err != nil {
			t.Fatal(err)
		}
		html := string(r.NotesHTML)
		if !strings.Contains(html, `class="`+store.NotesTruncatedClass+`"`) || strings.Count(html, "<li>") >= store.MaxNotes/len(line)+10 {
			t.Errorf("notes of %d bytes not cut at %d: %d items", len(md), store.MaxNotes, strings.Count(html, "<li>"))
		}
		if len(r.Warnings) != 0 {
			t.Errorf("cut notes warned: %v (the changelog itself is within its limit)", r.Warnings)
		}
	})
	t.Run("changelog", func(t *testing.T) {
		md := "## 1.0.0\n\nshort\n\n## 0.1.0\n\n" + strings.Repeat(line, readme.MaxMarkdown/len(line)+10)
		r := &store.Release{PackageID: "acme", Version: "1.0.0"}
		if err := r.SetChangelog([]byte(md)); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{store.RuleChangelogTruncated}, r.Warnings.Rules()); diff != "" {
			t.Errorf("warnings (-want +got):\n%s", diff)
		}
		if len(r.Warnings) == 0 {
			return
		}
		if msg := r.Warnings[0].Message; !strings.Contains(msg, fmt.Sprint(len(md))) || !strings.Contains(msg, "512 KiB") {
			t.Errorf("message %q names neither the size nor the limit", msg)
		}
	})
}

// TestChangelogStoredWithRelease inserts releases with and without CHANGELOG.md and reads
// back what pages load: the rendered changelog by release, the notes by version.
func TestChangelogStoredWithRelease(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	with := mustRelease(t, s, "acme", "1.0.0", []byte("one"))
	if err := with.SetChangelog([]byte("## 1.0.0\n\nFirst.\n")); err != nil {
		t.Fatal(err)
	}
	unnamed := mustRelease(t, s, "acme", "1.1.0", []byte("two"))
	if err := unnamed.SetChangelog([]byte("## 1.0.0\n\nFirst.\n")); err != nil {
		t.Fatal(err)
	}
	bare := mustRelease(t, s, "acme", "1.2.0", []byte("three"))
	for _, r := range []*store.Release{with, unnamed, bare} {
		if _, err := s.InsertRelease(ctx, r, store.AuditEntry{Actor: "a", Action: "publish", Target: r.PackageID}); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]string{}
	for _, r := range []*store.Release{with, unnamed, bare} {
		html, err := s.ChangelogHTML(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		got[r.Version] = string(html)
	}
	want := map[string]string{"1.0.0": "<h4>1.0.0</h4>\n<p>First.</p>\n", "1.1.0": "<h4>1.0.0</h4>\n<p>First.</p>\n", "1.2.0": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ChangelogHTML (-want +got):\n%s", diff)
	}
	notes, err := s.ReleaseNotes(ctx, "acme", []string{"1.0.0", "1.1.0", "1.2.0", "9.9.9"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]byte{"1.0.0": []byte("<p>First.</p>\n")}, notes); diff != "" {
		t.Errorf("ReleaseNotes (-want +got):\n%s", diff)
	}
	if n, err := s.ReleaseNotes(ctx, "acme", nil); err != nil || len(n) != 0 {
		t.Errorf("no versions: %v %v", n, err)
	}
}

// changelogOf is a Keep a Changelog file of about size bytes, its newest section 0.0.0.
func changelogOf(size int) []byte {
	var b strings.Builder
	b.WriteString("# Changelog\n\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "## [%d.%d.0] - 2026-01-01\n\n### Fixed\n\n- A fix with `code` and a [link](https://example.com/%d).\n\n", i/100, i%100, i)
	}
	return []byte(b.String())
}

// BenchmarkChangelogSection looks for a version no heading names, so the whole file is
// read, at growing sizes: the cost grows linearly with the file.
func BenchmarkChangelogSection(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		md := changelogOf(size)
		if store.ChangelogSection(md, "0.0.0") == nil {
			b.Fatal("no section")
		}
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(md)))
			for b.Loop() {
				store.ChangelogSection(md, "9999.0.0")
			}
		})
	}
}

// BenchmarkSetChangelog is the publish-time work: render the changelog and the notes.
func BenchmarkSetChangelog(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		md := changelogOf(size)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(md)))
			for b.Loop() {
				r := &store.Release{PackageID: "acme", Version: "0.0.0"}
				if err := r.SetChangelog(md); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

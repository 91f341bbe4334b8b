package readme_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/pluginyard/registry/readme"
)

// amplifying is n uses of one reference definition whose URL is urlLen bytes: about
// urlLen+10 bytes of HTML per 4 bytes of Markdown.
func amplifying(urlLen, n int) []byte {
	return []byte("[a]: https://example.com/" + strings.Repeat("x", urlLen) + "\n\n" + strings.Repeat("[a] ", n) + "\n")
}

func TestRenderLimitedOversize(t *testing.T) {
	tests := []struct {
		name     string
		src      []byte
		limit    int
		oversize bool
	}{
		{"2 KB of Markdown, 100 MB of HTML", amplifying(2000, 50_000), readme.MaxHTML, true},
		{"just over a small limit", amplifying(100, 100), 10 << 10, true},
		{"just under a small limit", amplifying(100, 50), 10 << 10, false},
		{"plain README", []byte("# Hi\n\nSome **text**.\n"), readme.MaxHTML, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := readme.RenderLimited(tc.src, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if r.Oversize != tc.oversize {
				t.Fatalf("Oversize = %v, want %v (%d bytes of HTML)", r.Oversize, tc.oversize, len(r.HTML))
			}
			if tc.oversize && r.HTML != nil {
				t.Errorf("oversize result kept %d bytes of HTML, want none", len(r.HTML))
			}
			if !tc.oversize && (len(r.HTML) == 0 || len(r.HTML) > tc.limit) {
				t.Errorf("%d bytes of HTML, want 1..%d", len(r.HTML), tc.limit)
			}
		})
	}
}

// TestRenderReturnsNoticeForOversizeHTML: Render, used where nothing reports a warning
// (the 0003 migration), returns the short notice instead of the HTML.
func TestRenderReturnsNoticeForOversizeHTML(t *testing.T) {
	src := amplifying(2000, 50_000)
	h, _, err := readme.Render(src)
	if err != nil {
		t.Fatal(err)
	}
	want := string(readme.OversizeNotice("README.md", len(src), readme.MaxHTML))
	if string(h) != want {
		t.Errorf("Render = %.300q, want the notice %q", h, want)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(h))
	if err != nil {
		t.Fatal(err)
	}
	if n := doc.Find("p." + readme.OversizeClass).Length(); n != 1 {
		t.Errorf("%d notices, want 1: %s", n, h)
	}
}

func TestOversizeNoticeEscapesFileName(t *testing.T) {
	got := string(readme.OversizeNotice("<b>x</b>", 10, 1<<20))
	if strings.Contains(got, "<b>") || !strings.Contains(got, "1024 KiB") || !strings.Contains(got, "10 bytes") {
		t.Errorf("notice %q: want the file name escaped, the size and the limit", got)
	}
}

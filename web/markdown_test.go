package web_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a-h/templ"
	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/web"
)

func TestRenderMarkdownRemovesXSS(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "testdata", "web", "xss-readme.md"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := web.RenderMarkdown(src)
	if err != nil {
		t.Fatal(err)
	}
	_, doc := mustRender(t, templ.Raw(h.String()))
	absent := []string{"script", "iframe", "object", "embed", "form", "input[name=password]", "style", "svg",
		"[onerror]", "[onclick]", "[onload]", "[style]",
		`a[href^="javascript" i]`, `a[href^="data:" i]`, `img[src^="docs/"]`, `a[href^="docs/"]`}
	for _, sel := range absent {
		if n := doc.Find(sel).Length(); n != 0 {
			t.Errorf("%s: %d left in the sanitized README:\n%s", sel, n, h)
		}
	}
	for _, raw := range []string{"alert(", "javascript:", "evil.example.com"} {
		if strings.Contains(strings.ToLower(h.String()), strings.ToLower(raw)) {
			t.Errorf("sanitized README still contains %q:\n%s", raw, h)
		}
	}
	kept := map[string]int{
		"h3":                                 1, // "# ..." shifted under the page's headings
		`a[href="https://example.com/docs"]`: 1,
		`img[src="https://example.com/shot.png"]`:       1,
		`img[src="https://example.com/x.png"][alt="x"]`: 1,
	}
	for sel, n := range kept {
		if got := doc.Find(sel).Length(); got != n {
			t.Errorf("%s: %d in the sanitized README, want %d:\n%s", sel, got, n, h)
		}
	}
	if rel, _ := doc.Find(`a[href="https://example.com/docs"]`).Attr("rel"); !strings.Contains(rel, "nofollow") {
		t.Errorf("external link rel = %q, want nofollow", rel)
	}
}

func TestRenderMarkdown(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"emphasis", "Hello **world**", "<p>Hello <strong>world</strong></p>\n"},
		{"heading shifted", "# Title\n\n#### Deep", "<h3>Title</h3>\n<h6>Deep</h6>\n"},
		{"gfm strikethrough", "~~old~~", "<p><del>old</del></p>\n"},
		{"autolink", "see https://example.com", `<p>see <a href="https://example.com" rel="nofollow noreferrer">https://example.com</a></p>` + "\n"},
		{"escaped text", "a < b & c", "<p>a &lt; b &amp; c</p>\n"},
		{"inline script", "x <script>alert(1)</script> y", "<p>x  y</p>\n"},
		{"event handler", `<b onmouseover="alert(1)">bold</b>`, "<p><b>bold</b></p>\n"},
		{"javascript link", "[x](javascript:alert(1))", "<p>x</p>\n"},
		{"relative image source dropped, alt kept", "![shot](img/a.png)", `<p><img alt="shot"></p>` + "\n"},
		{"relative link dropped, text kept", "[usage](docs/USAGE.md)", "<p>usage</p>\n"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := web.RenderMarkdown([]byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, h.String()); diff != "" {
				t.Errorf("RenderMarkdown(%q) (-want +got):\n%s", tt.src, diff)
			}
		})
	}
}

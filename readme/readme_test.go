package readme_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/readme"
)

func mustRender(tb testing.TB, src []byte) (string, *goquery.Document) {
	tb.Helper()
	h, _, err := readme.Render(src)
	if err != nil {
		tb.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(h))
	if err != nil {
		tb.Fatalf("parse rendered HTML: %v", err)
	}
	return string(h), doc
}

func TestRenderRemovesXSS(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "xss-readme.md"))
	if err != nil {
		t.Fatal(err)
	}
	h, doc := mustRender(t, src)
	absent := []string{"script", "iframe", "object", "embed", "form", "input[name=password]", "style", "svg",
		"[onerror]", "[onclick]", "[onload]", "[style]",
		`a[href^="javascript" i]`, `a[href^="data:" i]`, `img[src^="docs/"]`, `a[href^="docs/"]`}
	for _, sel := range absent {
		if n := doc.Find(sel).Length(); n != 0 {
			t.Errorf("%s: %d left in the sanitized README:\n%s", sel, n, h)
		}
	}
	for _, raw := range []string{"alert(", "javascript:", "evil.example.com"} {
		if strings.Contains(strings.ToLower(h), strings.ToLower(raw)) {
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

func TestRender(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"emphasis", "Hello **world**", "<p>Hello <strong>world</strong></p>\n"},
		{"heading shifted", "# Title\n\n#### Deep", "<h3>Title</h3>\n<h6>Deep</h6>\n"},
		{"gfm strikethrough", "~~old~~", "<p><del>old</del></p>\n"},
		{"gfm table", "|a|b|\n|-|-|\n|1|2|", "<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n<td>2</td>\n</tr>\n</tbody>\n</table>\n"},
		{"gfm task list", "- [x] done", `<ul>` + "\n" + `<li><input checked="" disabled="" type="checkbox"> done</li>` + "\n</ul>\n"},
		{"autolink", "see https://example.com", `<p>see <a href="https://example.com" rel="nofollow noreferrer">https://example.com</a></p>` + "\n"},
		{"escaped text", "a < b & c", "<p>a &lt; b &amp; c</p>\n"},
		{"inline script", "x <script>alert(1)</script> y", "<p>x  y</p>\n"},
		{"event handler", `<b onmouseover="alert(1)">bold</b>`, "<p><b>bold</b></p>\n"},
		{"javascript link", "[x](javascript:alert(1))", "<p>x</p>\n"},
		{"link with title", `[x](https://e.com "T")`, `<p><a href="https://e.com" title="T" rel="nofollow noreferrer">x</a></p>` + "\n"},
		{"code span", "use `a*b` here", "<p>use <code>a*b</code> here</p>\n"},
		{"relative image source dropped, alt kept", "![shot](img/a.png)", `<p><img alt="shot"></p>` + "\n"},
		{"relative link dropped, text kept", "[usage](docs/USAGE.md)", "<p>usage</p>\n"},
		{"reference links across quoted lines", "> [a] and\n> [b]\n\n[a]: https://a.example\n[b]: https://b.example",
			"<blockquote>\n<p>" + `<a href="https://a.example" rel="nofollow noreferrer">a</a> and` + "\n" + `<a href="https://b.example" rel="nofollow noreferrer">b</a>` + "</p>\n</blockquote>\n"},
		{"emphasis around a link far from its opener", "*" + strings.Repeat("`c` ", 40) + "[b](https://e.com)*",
			"<p><em>" + strings.Repeat("<code>c</code> ", 40) + `<a href="https://e.com" rel="nofollow noreferrer">b</a></em></p>` + "\n"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, truncated, err := readme.Render([]byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if truncated {
				t.Error("truncated = true for a short README")
			}
			if diff := cmp.Diff(tt.want, string(h)); diff != "" {
				t.Errorf("Render(%q) (-want +got):\n%s", tt.src, diff)
			}
		})
	}
}

// TestRenderBounds checks that input past each bound renders as literal text (each bound
// keeps the renderer linear; see BenchmarkRenderPathological for the time).
func TestRenderBounds(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		sel     string
		wantN   int
		literal string // text that must stay literal
	}{
		{name: "block quotes nest at most 32 deep", src: strings.Repeat(">", 100) + " a", sel: "blockquote", wantN: 32},
		{name: "lists nest at most 32 containers deep", src: strings.Repeat("- ", 100) + "a", sel: "ul", wantN: 16},
		{name: "pending delimiters past 128 are text", src: strings.Repeat("_a ", 200) + "b_", sel: "em", wantN: 0},
		{name: "delimiter runs past 32 are text", src: strings.Repeat("*", 40) + "a" + strings.Repeat("*", 40), sel: "em, strong", wantN: 0},
		{name: "code span openers past 32 backticks are text", src: strings.Repeat("`", 40) + "a" + strings.Repeat("`", 40), sel: "code", wantN: 0},
		{name: "link destinations past 4 KiB are text", src: "[a](https://e.com/" + strings.Repeat("x", 5000) + ")", sel: "a[title]", wantN: 0, literal: "[a](<a"},
		{name: "labels past 32 open are text", src: strings.Repeat("[", 40) + `a](https://e.com "t")`, sel: "a[title]", wantN: 1, literal: `<a href="https://e.com" title="t" rel="nofollow noreferrer">[[[[[[[[a</a>`},
		{name: "links after 64 failed in a block are not looked past", src: strings.Repeat("[x](a b) ", 64) + `[y](https://e.com "t")`, sel: "a[title]", wantN: 0, literal: "[y]("},
		{name: "tables with more cells than bytes stay paragraphs", src: strings.Repeat("a|", 10) + "\n" + strings.Repeat("-|", 10) + "\n" + strings.Repeat("x\n", 50), sel: "table", wantN: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, doc := mustRender(t, []byte(tt.src))
			if got := doc.Find(tt.sel).Length(); got > tt.wantN {
				t.Errorf("%d %s, want at most %d:\n%.400s", got, tt.sel, tt.wantN, h)
			}
			if !strings.Contains(h, tt.literal) {
				t.Errorf("%q is not literal text:\n%.400s", tt.literal, h)
			}
		})
	}
}

func TestRenderReferenceDefinitionsInLongParagraphs(t *testing.T) {
	var src strings.Builder
	for i := range 200 {
		src.WriteString("[r" + itoa(i) + "]: https://e.example/" + itoa(i) + "\n")
	}
	src.WriteString("tail text\n\n")
	for i := range 200 {
		src.WriteString("[r" + itoa(i) + "] ")
	}
	h, doc := mustRender(t, []byte(src.String()))
	if got := doc.Find(`a[href^="https://e.example/"]`).Length(); got != 200 {
		t.Errorf("%d resolved reference links, want 200", got)
	}
	if !strings.Contains(h, "<p>tail text</p>") {
		t.Errorf("the paragraph's text after the definitions is lost:\n%.300s", h)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestRenderTruncates(t *testing.T) {
	line := strings.Repeat("word ", 20) + "\n"
	src := []byte(strings.Repeat(line, readme.MaxMarkdown/len(line)+10))
	h, truncated, err := readme.Render(src)
	if err != nil {
		t.Fatal(err)
	}
	if !truncated {
		t.Fatal("truncated = false for a README over MaxMarkdown")
	}
	doc, _ := goquery.NewDocumentFromReader(bytes.NewReader(h))
	note := doc.Find("p." + readme.TruncatedClass)
	if note.Length() != 1 || !strings.Contains(note.Text(), "first") {
		t.Errorf("no visible truncation note: %q", note.Text())
	}
	if strings.Contains(doc.Find("p").Last().Prev().Text(), "wor\n") {
		t.Error("cut inside a line")
	}
}

func TestRenderTruncatesOneLongLineAtARuneBoundary(t *testing.T) {
	src := []byte(strings.Repeat("é", readme.MaxMarkdown)) // 2 bytes each, no newline
	h, truncated, err := readme.Render(src)
	if err != nil {
		t.Fatal(err)
	}
	if !truncated {
		t.Fatal("truncated = false")
	}
	if !bytes.Contains(h, []byte(readme.TruncatedClass)) {
		t.Error("no truncation note")
	}
	if bytes.ContainsRune(h, '\uFFFD') {
		t.Error("cut inside a UTF-8 sequence")
	}
}

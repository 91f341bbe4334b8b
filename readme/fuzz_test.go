package readme_test

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/pluginyard/registry/readme"
)

// FuzzRender checks that no input panics the renderer and that its output is always
// sanitized: no script, style or iframe element, no event-handler attribute, no
// javascript: or data: URL.
func FuzzRender(f *testing.F) {
	if xss, err := os.ReadFile(filepath.Join("testdata", "xss-readme.md")); err == nil {
		f.Add(xss)
	}
	for _, p := range pathological {
		f.Add([]byte(p.gen(256)))
	}
	f.Add([]byte("<a href=\"javascript:alert(1)\" onclick=x>x</a>\n<scr<script>ipt>alert(1)</script>"))
	f.Fuzz(func(t *testing.T, src []byte) {
		h, _, err := readme.Render(src)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(h))
		if err != nil {
			t.Fatal(err)
		}
		if n := doc.Find("script, style, iframe, object, embed, form, svg, math, base, meta, link").Length(); n > 0 {
			t.Fatalf("%d unsafe elements in %q", n, h)
		}
		doc.Find("*").Each(func(_ int, s *goquery.Selection) {
			for _, a := range s.Nodes[0].Attr {
				v := strings.ToLower(strings.TrimSpace(a.Val))
				switch {
				case strings.HasPrefix(strings.ToLower(a.Key), "on"):
					t.Fatalf("event handler %s in %q", a.Key, h)
				case a.Key == "style":
					t.Fatalf("style attribute in %q", h)
				case (a.Key == "href" || a.Key == "src") && !allowedURL(v):
					t.Fatalf("%s=%q in %q", a.Key, a.Val, h)
				}
			}
		})
	})
}

// allowedURL reports an absolute http, https or mailto URL, as the policy allows.
func allowedURL(v string) bool {
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "mailto")
}

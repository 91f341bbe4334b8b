package web_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/pluginyard/registry/web"
)

// maxPageBytes is the bound on a page's HTML with a 1,000-plugin catalog.
const maxPageBytes = 100 << 10

func TestPagesStaySmallWith1000Plugins(t *testing.T) {
	all := sampleCards(1000)
	long := samplePlugin()
	long.Versions = sampleVersions(60)
	pages := map[string]web.HomePage{
		"first page": homeFor(all, 1, 24),
		"last page":  homeFor(all, 42, 24),
		"100 a page": homeFor(all, 1, 100),
	}
	for name, p := range pages {
		t.Run(name, func(t *testing.T) {
			html, doc := mustRender(t, web.Home(p))
			if n := doc.Find(testid("results") + " " + testid("card")).Length(); n != len(p.Cards) {
				t.Fatalf("rendered %d cards, want %d", n, len(p.Cards))
			}
			if len(html) > maxPageBytes {
				t.Errorf("home page is %d bytes, want at most %d", len(html), maxPageBytes)
			}
		})
	}
	t.Run("plugin with 60 versions", func(t *testing.T) {
		html, _ := mustRender(t, web.Plugin(long))
		if len(html) > maxPageBytes {
			t.Errorf("plugin page is %d bytes, want at most %d", len(html), maxPageBytes)
		}
	})
}

func BenchmarkHome1000(b *testing.B) {
	all := sampleCards(1000)
	var buf bytes.Buffer
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		page := homeFor(all, i%42+1, 24)
		buf.Reset()
		if err := web.Home(page).Render(context.Background(), &buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "html-bytes")
}

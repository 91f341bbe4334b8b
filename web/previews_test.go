package web_test

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/web"
)

// TestGalleryPlaceholders: a preview with the registry's copy is an image; one without
// (not fetched yet, or failed) is a labelled placeholder box with its alternative text,
// never an <img> without a source.
func TestGalleryPlaceholders(t *testing.T) {
	local := "/previews/" + strings.Repeat("ab", 32) + ".png"
	tests := []struct {
		name         string
		previews     []web.Preview
		imgs         []string // src of each img
		placeholders []string // aria-label and text of each placeholder
	}{
		{"all copied", []web.Preview{{URL: local, Alt: "Board"}}, []string{local}, nil},
		{"none copied", []web.Preview{{Alt: "Board"}, {Alt: "Dark board"}}, nil, []string{"Board|Board", "Dark board|Dark board"}},
		{"mixed", []web.Preview{{Alt: "Board"}, {URL: local, Alt: "Dark board"}}, []string{local}, []string{"Board|Board"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := samplePlugin()
			p.Previews = tt.previews
			_, doc := mustRender(t, web.Plugin(p))
			var imgs, placeholders []string
			doc.Find(testid("previews") + " img").Each(func(_ int, s *goquery.Selection) { imgs = append(imgs, s.AttrOr("src", "")) })
			doc.Find(testid("previews") + " " + testid("preview-placeholder")).Each(func(_ int, s *goquery.Selection) {
				placeholders = append(placeholders, s.AttrOr("aria-label", "")+"|"+strings.TrimSpace(s.Find("span").Text()))
				if s.AttrOr("role", "") != "img" || !s.HasClass("preview-placeholder") {
					t.Errorf("placeholder without role=img and its class: %s", goquery.NodeName(s))
				}
				if s.Parent().Find("figcaption").Length() != 0 {
					t.Errorf("a placeholder repeats its alternative text in a caption")
				}
			})
			if diff := cmp.Diff(tt.imgs, imgs); diff != "" {
				t.Errorf("img srcs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.placeholders, placeholders); diff != "" {
				t.Errorf("placeholders (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlaceholderIsStyled: the placeholder's class has its rule in the stylesheet, so it
// is a box, not bare text.
func TestPlaceholderIsStyled(t *testing.T) {
	css, _, _ := web.Static(strings.TrimPrefix(web.CSSPath(), "/static/"))
	if !strings.Contains(string(css), ".gallery .preview-placeholder {") {
		t.Errorf("the stylesheet has no rule for .preview-placeholder")
	}
}

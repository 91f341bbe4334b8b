package web_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/pluginyard/registry/web"
)

// fill sets every string in v (fields, slices, pointed-to structs) to
// payload, and gives slices of structs and strings one element, so every
// field that carries user text reaches the page.
func fill(v reflect.Value, payload string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(payload)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), payload)
			}
		}
	case reflect.Slice:
		if v.Len() == 0 {
			v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		}
		for i := range v.Len() {
			fill(v.Index(i), payload)
		}
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), payload)
	case reflect.Int, reflect.Int64:
		v.SetInt(2)
	case reflect.Bool:
		v.SetBool(true)
	}
}

func filled[T any](payload string) T {
	var m T
	fill(reflect.ValueOf(&m).Elem(), payload)
	return m
}

// everyPage renders each page with every text field set to payload.
func everyPage(payload string) map[string]templ.Component {
	pages := map[string]templ.Component{
		"home":      web.Home(filled[web.HomePage](payload)),
		"plugin":    web.Plugin(filled[web.PluginPage](payload)),
		"extension": web.Extension(filled[web.ExtensionPage](payload)),
		"publisher": web.Publisher(filled[web.PublisherPage](payload)),
		"category":  web.Category(filled[web.CategoryPage](payload)),
		"error 404": web.Error(filled[web.ErrorPage](payload)),
	}
	e := filled[web.ErrorPage](payload)
	e.Status = 500
	pages["error 500"] = web.Error(e)
	for _, s := range []string{web.DocsIndex, web.DocsAuthors, web.DocsOperators} {
		d := filled[web.DocsPage](payload)
		d.Section = s
		pages["docs "+s] = web.Docs(d)
	}
	home := filled[web.HomePage](payload)
	home.Cards, home.Featured = nil, nil // the no-results help repeats the query
	pages["home no results"] = web.Home(home)
	return pages
}

func TestUserTextIsEscaped(t *testing.T) {
	const payload = `"'><script>alert(1)</script><img src=x onerror=alert(2)>`
	for name, page := range everyPage(payload) {
		t.Run(name, func(t *testing.T) {
			html, doc := mustRender(t, page)
			if strings.Contains(html, "<script>alert(1)</script>") {
				t.Errorf("raw payload in the page")
			}
			if n := doc.Find("script").Length(); n != 1 {
				t.Errorf("%d script elements, want only the copy-button script", n)
			}
			if n := doc.Find(`img[src="x"], [onerror]`).Length(); n != 0 {
				t.Errorf("%d injected elements or handlers", n)
			}
			if !strings.Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;") {
				t.Errorf("the payload is not shown escaped, so the fields were not rendered")
			}
			assertNoHandlers(t, doc)
		})
	}
}

func TestURLsAreSanitized(t *testing.T) {
	for name, page := range everyPage("javascript:alert(1)") {
		t.Run(name, func(t *testing.T) {
			_, doc := mustRender(t, page)
			doc.Find("[href], [src], [action]").Each(func(_ int, s *goquery.Selection) {
				for _, a := range []string{"href", "src", "action"} {
					if v, ok := s.Attr(a); ok && strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), "javascript:") {
						t.Errorf("<%s %s=%q>", goquery.NodeName(s), a, v)
					}
				}
			})
		})
	}
}

func assertNoHandlers(t *testing.T, doc *goquery.Document) {
	t.Helper()
	doc.Find("*").Each(func(_ int, s *goquery.Selection) {
		for _, a := range s.Nodes[0].Attr {
			if strings.HasPrefix(strings.ToLower(a.Key), "on") {
				t.Errorf("<%s> has event handler %s=%q", goquery.NodeName(s), a.Key, a.Val)
			}
		}
	})
}

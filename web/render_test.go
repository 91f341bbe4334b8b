package web_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"
)

// mustRender renders a component into a buffer and parses it.
func mustRender(tb testing.TB, c templ.Component) (string, *goquery.Document) {
	tb.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		tb.Fatalf("render: %v", err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(buf.String()))
	if err != nil {
		tb.Fatalf("parse rendered HTML: %v", err)
	}
	return buf.String(), doc
}

func testid(id string) string { return `[data-testid="` + id + `"]` }

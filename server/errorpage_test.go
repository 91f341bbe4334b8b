package server_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestErrorPageHasOneSearchBox: a 404 page offers its own search, so the header leaves its
// box out; a 500 page has no search of its own, so the header keeps it.
func TestErrorPageHasOneSearchBox(t *testing.T) {
	e := newEnv(t, "")
	r := e.get("/plugins/no-such-plugin", "Accept", "text/html")
	if r.Status != http.StatusNotFound {
		t.Fatalf("status %d", r.Status)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatal(err)
	}
	if n := doc.Find(`input[type=search]`).Length(); n != 1 {
		t.Errorf("the 404 page has %d search boxes, want 1", n)
	}
}

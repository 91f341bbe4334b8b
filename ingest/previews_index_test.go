package ingest

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
)

// TestIndexCarriesThePreviewCopy: once a preview is copied, index.json lists the registry's
// copy beside the original URL (an additive field hosts may prefer), without a publish.
func TestIndexCarriesThePreviewCopy(t *testing.T) {
	img := pngBytes(t)
	host := newImageHost(t, map[string]http.HandlerFunc{"/cover.png": serve(img)})
	l := previewList(host.URL + "/cover.png")
	s := newPreviewService(t, host, l)
	publishOK(t, s, "acme-hello", "1.0.0", "Says hello")
	if err := s.WaitPreviews(context.Background()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Plugins []struct {
			ID       string
			Previews []struct {
				URL         string `json:"url"`
				RegistryURL string `json:"registry_url"`
			}
		}
	}
	if err := json.Unmarshal(s.Documents().Kandev.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	want := "http://r.example/previews/" + sha256Hex(img) + ".png"
	for _, p := range doc.Plugins {
		if p.ID == "acme-hello" {
			if len(p.Previews) != 1 || p.Previews[0].URL != host.URL+"/cover.png" || p.Previews[0].RegistryURL != want {
				t.Fatalf("previews %+v, want the original URL and registry_url %s", p.Previews, want)
			}
			return
		}
	}
	t.Fatalf("acme-hello not in index.json: %s", s.Documents().Kandev.Body.Bytes())
}

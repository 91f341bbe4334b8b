package server_test

import (
	"net/http"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"
)

// TestOneVersionOrderAcrossSurfaces publishes versions out of order (pre-releases among
// them), yanks the newest, and asserts that index.json, the API (latest and the versions
// list), the page's versions table and its Latest badge all tell the same story.
func TestOneVersionOrderAcrossSurfaces(t *testing.T) {
	e := newEnv(t, "")
	for _, v := range []string{"0.2.0", "0.1.5", "1.0.0-rc.1", "1.0.0-beta.11", "0.10.0", "1.0.0-beta.2", "1.1.0"} {
		e.mustPublish("acme-hello-"+v+".tar.gz", pkg(t, "acme-hello", v, "Says hello"))
	}
	if r := e.post("/api/v1/plugins/acme-hello/versions/1.1.0/yank", adminToken, map[string]string{"reason": "broken"}); r.Status != http.StatusOK {
		t.Fatalf("yank: %d %s", r.Status, r.Body)
	}
	wantOrder := []string{"1.1.0", "1.0.0-rc.1", "1.0.0-beta.11", "1.0.0-beta.2", "0.10.0", "0.2.0", "0.1.5"}
	const wantLatest = "1.0.0-rc.1" // the highest version that is not yanked

	var idx struct {
		Plugins []struct{ ID, Version string } `json:"plugins"`
	}
	e.get("/index.json").json(t, &idx)
	if len(idx.Plugins) != 1 || idx.Plugins[0].Version != wantLatest {
		t.Errorf("index.json: %+v, want acme-hello %s", idx.Plugins, wantLatest)
	}

	var api struct {
		Version  string `json:"version"`
		Versions []struct {
			Version string `json:"version"`
		} `json:"versions"`
	}
	e.get("/api/v1/plugins/acme-hello").json(t, &api)
	var apiOrder []string
	for _, v := range api.Versions {
		apiOrder = append(apiOrder, v.Version)
	}
	if api.Version != wantLatest {
		t.Errorf("API version %q, want %q", api.Version, wantLatest)
	}
	if d := cmp.Diff(wantOrder, apiOrder); d != "" {
		t.Errorf("API versions order (-want +got):\n%s", d)
	}

	var list struct {
		Plugins []struct{ ID, Version string } `json:"plugins"`
	}
	e.get("/api/v1/plugins").json(t, &list)
	if len(list.Plugins) != 1 || list.Plugins[0].Version != wantLatest {
		t.Errorf("API list: %+v, want acme-hello %s", list.Plugins, wantLatest)
	}

	doc := e.page("/plugins/acme-hello")
	var pageOrder, badged []string
	doc.Find(`[data-testid="versions-table"] tbody tr`).Each(func(_ int, s *goquery.Selection) {
		v, _ := s.Attr("data-version")
		pageOrder = append(pageOrder, v)
		if s.Find(`[data-testid="latest-label"]`).Length() > 0 {
			badged = append(badged, v)
		}
	})
	if d := cmp.Diff(wantOrder, pageOrder); d != "" {
		t.Errorf("versions table order (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{wantLatest}, badged); d != "" {
		t.Errorf("Latest badge (-want +got):\n%s", d)
	}
	if href, _ := doc.Find(`[data-testid="download-link"]`).Attr("href"); href != e.srv.URL+"/packages/acme-hello/acme-hello-"+wantLatest+".tar.gz" {
		t.Errorf("install box downloads %q, want the %s package", href, wantLatest)
	}
}

package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestDownloadTotalsAreLive: package totals on the API, the pages and index.json follow
// downloads after a flush (every ingest.DownloadFlushInterval in serve), without a publish.
func TestDownloadTotalsAreLive(t *testing.T) {
	e := newEnv(t, "")
	e.mustPublish("acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x"))
	e.mustPublish("acme-hello-1.1.0.tar.gz", pkg(t, "acme-hello", "1.1.0", "x"))
	for _, v := range []string{"1.0.0", "1.1.0", "1.1.0"} {
		if r := e.get("/packages/acme-hello/acme-hello-" + v + ".tar.gz"); r.Status != http.StatusOK {
			t.Fatalf("download %s: %d", v, r.Status)
		}
	}
	if err := e.svc.FlushDownloads(context.Background()); err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Plugins []struct {
			ID        string
			Downloads int64
		}
	}
	e.get("/index.json").json(t, &idx)
	if len(idx.Plugins) != 1 || idx.Plugins[0].Downloads != 3 {
		t.Errorf("index.json downloads: %+v, want 3", idx.Plugins)
	}
	var api struct{ Downloads int64 }
	e.get("/api/v1/plugins/acme-hello").json(t, &api)
	if api.Downloads != 3 {
		t.Errorf("API downloads %d, want 3", api.Downloads)
	}
	var list struct {
		Plugins []struct{ Downloads int64 }
	}
	e.get("/api/v1/plugins?sort=downloads").json(t, &list)
	if len(list.Plugins) != 1 || list.Plugins[0].Downloads != 3 {
		t.Errorf("API list downloads: %+v, want 3", list.Plugins)
	}
	if home := e.get("/"); !strings.Contains(string(home.Body), "3 downloads") {
		t.Error("the home page's card does not show 3 downloads")
	}
}

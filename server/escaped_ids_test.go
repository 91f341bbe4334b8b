package server_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/pluginyard/registry/server"
)

// TestScopedExtensionThroughTheAPI: a scoped extension id travels as one escaped path
// segment (%40acme%2Fhello-ext), and every API route that takes an id or a version reads
// it unescaped: the extension is shown, its version shown, yanked, unyanked and
// deprecated, its compatibility asked, as its plain id would be.
func TestScopedExtensionThroughTheAPI(t *testing.T) {
	e := extEnv(t)
	base := "/api/v1/plugins/" + scopedExtEsc
	var show struct {
		ID string `json:"id"`
	}
	r := e.get(base)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", base, r.Status, r.Body)
	}
	if r.json(t, &show); show.ID != scopedExtID {
		t.Errorf("GET %s: id %q, want %q", base, show.ID, scopedExtID)
	}
	if r := e.get(base + "/versions/1.0.0"); r.Status != http.StatusOK {
		t.Errorf("GET %s/versions/1.0.0: %d %s", base, r.Status, r.Body)
	}
	var v struct {
		Yanked bool `json:"yanked"`
	}
	r = e.post(base+"/versions/1.0.0/yank", adminToken, map[string]string{"reason": "broken start-up"})
	if r.Status != http.StatusOK {
		t.Fatalf("yank: %d %s", r.Status, r.Body)
	}
	if r.json(t, &v); !v.Yanked {
		t.Errorf("yank answered %s, want yanked", r.Body)
	}
	r = e.post(base+"/versions/1.0.0/unyank", adminToken, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("unyank: %d %s", r.Status, r.Body)
	}
	if r.json(t, &v); v.Yanked {
		t.Errorf("unyank answered %s, want not yanked", r.Body)
	}
	var dep struct {
		ID string `json:"id"`
	}
	r = e.post(base+"/deprecate", adminToken, map[string]string{"reason": "superseded"})
	if r.Status != http.StatusOK {
		t.Fatalf("deprecate: %d %s", r.Status, r.Body)
	}
	if r.json(t, &dep); dep.ID != scopedExtID {
		t.Errorf("deprecate answered id %q, want %q", dep.ID, scopedExtID)
	}
	// Host compatibility is for plugins: the refusal names the extension it found.
	if r := e.get(base + "/compatibility?kandev=1.0.0&platform=linux-amd64"); !strings.Contains(string(r.Body), scopedExtID+" is a Curupira extension") {
		t.Errorf("compatibility: %d %s", r.Status, r.Body)
	}
}

// TestEscapedUnreservedCharacterResolves: acme%2Dhello is acme-hello (RFC 3986 §2.3), on
// the pages, in the API and in the download counter.
func TestEscapedUnreservedCharacterResolves(t *testing.T) {
	e := newEnvWith(t, server.Config{}, nil, true)
	e.publishVersion("acme-hello", "1.0.0")
	for _, path := range []string{"/plugins/acme%2Dhello", "/api/v1/plugins/acme%2Dhello", "/api/v1/plugins/acme%2Dhello/versions/1%2E0%2E0",
		"/packages/acme%2Dhello/acme-hello-1.0.0.tar.gz"} {
		if r := e.get(path); r.Status != http.StatusOK {
			t.Errorf("GET %s: %d %.300s", path, r.Status, r.Body)
		}
	}
	if got := e.metricLines("registry_downloads_total{"); !slices.Equal(got, []string{`registry_downloads_total{kind="plugin"} 1`}) {
		t.Errorf("downloads counted as %q, want one plugin download", got)
	}
}

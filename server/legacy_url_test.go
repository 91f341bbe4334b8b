package server_test

import (
	"bytes"
	"context"
	"mime"
	"net/http"
	"strings"
	"testing"

	"github.com/pluginyard/registry/store"
)

// TestLegacyVersionURLsAreEscaped: a release stored before the SemVer rule with a version
// that holds URL and header metacharacters keeps a package_url that downloads exactly it,
// and a Content-Disposition that stays one quoted parameter.
func TestLegacyVersionURLsAreEscaped(t *testing.T) {
	e := newEnv(t, "")
	e.mustPublish("acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "current"))
	for _, v := range []string{"0.9.0?x#y", `0.8.0";evil="`, "0.7.0 beta"} {
		data := pkg(t, "acme-hello", "0.1.0", "legacy "+v)
		sha, err := e.st.Blobs.Put(data)
		if err != nil {
			t.Fatal(err)
		}
		rel := &store.Release{PackageID: "acme-hello", Version: v, Kind: "plugin", SHA256: sha, Size: int64(len(data)),
			Manifest: []byte(manifestYAML("acme-hello", "0.1.0", "")), PublishedBy: "test"}
		if _, err := e.st.InsertRelease(context.Background(), rel, store.AuditEntry{Actor: "test", Action: "publish", Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
		var detail struct {
			Versions []struct {
				Version    string `json:"version"`
				PackageURL string `json:"package_url"`
				Legacy     bool   `json:"legacy"`
				Log        *struct {
					LookupURL string `json:"lookup_url"`
				} `json:"log"`
			} `json:"versions"`
		}
		e.get("/api/v1/plugins/acme-hello").json(t, &detail)
		found := false
		for _, dv := range detail.Versions {
			if dv.Version != v {
				continue
			}
			found = true
			if !dv.Legacy {
				t.Errorf("%q is not flagged legacy", v)
			}
			if strings.ContainsAny(strings.TrimPrefix(dv.PackageURL, e.srv.URL), "?#\" ") {
				t.Errorf("package_url %q is not escaped", dv.PackageURL)
			}
			req, _ := http.NewRequest(http.MethodGet, dv.PackageURL, nil)
			r := e.do(req)
			if r.Status != http.StatusOK || !bytes.Equal(r.Body, data) {
				t.Errorf("GET %s: %d, %d bytes; want the legacy package", dv.PackageURL, r.Status, len(r.Body))
			}
			if dv.Log == nil {
				t.Errorf("%q has no log entry", v)
			} else if lr, _ := http.NewRequest(http.MethodGet, dv.Log.LookupURL, nil); lr == nil {
				t.Errorf("lookup_url %q is not a URL", dv.Log.LookupURL)
			} else if got := e.do(lr); got.Status != http.StatusOK || !strings.Contains(string(got.Body), sha) {
				t.Errorf("GET %s: %d %.200s; want the record of %s", dv.Log.LookupURL, got.Status, got.Body, v)
			}
			cd := r.Header.Get("Content-Disposition")
			if _, params, err := mime.ParseMediaType(cd); err != nil || len(params) != 1 || params["filename"] != "acme-hello-"+v+".tar.gz" {
				t.Errorf("Content-Disposition %q parses to %v (%v), want the one file name", cd, params, err)
			}
		}
		if !found {
			t.Errorf("version %q not in the API", v)
		}
	}
}

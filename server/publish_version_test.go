package server_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// A release stored before the version grammar stays downloadable, is flagged legacy and
// sorts below valid versions; the valid version equal to it is refused with 409.
func TestLegacyVersionsStayDownloadableAndBlockTheirEqual(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	data := pkg(t, "acme-hello", "v1.0.0", "legacy")
	sha, err := e.st.Blobs.Put(data)
	if err != nil {
		t.Fatal(err)
	}
	legacy := &store.Release{PackageID: "acme-hello", Version: "v1.0.0", Kind: "plugin", SHA256: sha, Size: int64(len(data)),
		Manifest: []byte("id: acme-hello\napi_version: 2\nversion: v1.0.0\ndisplay_name: Hello\ndescription: legacy\nauthor: Acme\n")}
	if _, err := e.st.InsertRelease(ctx, legacy, store.AuditEntry{Actor: "t", Action: "publish"}); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x"))
	if r.Status != http.StatusConflict || !hasRule(t, r, "publish.version.exists") {
		t.Fatalf("1.0.0 beside a stored v1.0.0: %d %s, want 409 publish.version.exists", r.Status, r.Body)
	}
	for _, v := range []string{"1.10.0", "1.2.0"} {
		if r := e.publish(adminToken, "acme-hello-"+v+".tar.gz", pkg(t, "acme-hello", v, "x")); r.Status != http.StatusCreated {
			t.Fatalf("publish %s: %d %s", v, r.Status, r.Body)
		}
	}
	var detail struct {
		Version  string
		Versions []struct {
			Version string
			Legacy  bool
		}
	}
	e.get("/api/v1/plugins/acme-hello").json(t, &detail)
	type entry = struct {
		Version string
		Legacy  bool
	}
	want := []entry{{"1.10.0", false}, {"1.2.0", false}, {"v1.0.0", true}}
	if diff := cmp.Diff(want, detail.Versions); diff != "" || detail.Version != "1.10.0" {
		t.Errorf("latest %q; versions (-want +got):\n%s", detail.Version, diff)
	}
	if r := e.get("/packages/acme-hello/acme-hello-v1.0.0.tar.gz"); r.Status != http.StatusOK || len(r.Body) != len(data) {
		t.Errorf("legacy download: %d, %d bytes", r.Status, len(r.Body))
	}
}

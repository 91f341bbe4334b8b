package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
	"github.com/pluginyard/registry/verify"
)

// TestPostgresAndS3EndToEnd runs the registry on PostgreSQL and an S3 bucket, both real
// servers: publish two versions, index.json lists the latest with its package_sha256,
// the download is those bytes, yank the latest; then a second registry process on the
// same database and bucket but a fresh data directory (nothing local kept) shows the same
// catalogue: the yank, the listed version and both downloads.
func TestPostgresAndS3EndToEnd(t *testing.T) {
	dsn := storetest.CreateDatabase(t, storetest.StartPostgres(t))
	blobs := s3Blobs(t)
	listPath := filepath.Join(t.TempDir(), "plugins.yaml")
	if err := os.WriteFile(listPath, []byte(testList), 0o644); err != nil {
		t.Fatal(err)
	}
	v1, v2 := pkg(t, "acme-hello", "1.0.0", "Says hello"), pkg(t, "acme-hello", "1.1.0", "Says hello again")

	e := startOn(t, dsn, blobs, listPath)
	e.mustPublish("acme-hello-1.0.0.tar.gz", v1)
	e.mustPublish("acme-hello-1.1.0.tar.gz", v2)
	if got := indexSHA(t, e, "acme-hello"); got != sha(v2) {
		t.Fatalf("index.json package_sha256 %s, want 1.1.0's %s", got, sha(v2))
	}
	checkDownload(t, e, "1.1.0", v2)
	e.mustPost("/api/v1/plugins/acme-hello/versions/1.1.0/yank", map[string]string{"reason": "broken build"})
	if got := indexSHA(t, e, "acme-hello"); got != sha(v1) {
		t.Fatalf("after the yank index.json package_sha256 %s, want 1.0.0's %s", got, sha(v1))
	}
	e.close()

	again := startOn(t, dsn, blobs, listPath)
	if got := indexSHA(t, again, "acme-hello"); got != sha(v1) {
		t.Errorf("re-opened: index.json package_sha256 %s, want 1.0.0's %s (the yank kept)", got, sha(v1))
	}
	rel, err := again.st.Release(context.Background(), "acme-hello", "1.1.0")
	if err != nil || !rel.Yanked || rel.YankReason != "broken build" {
		t.Errorf("re-opened: 1.1.0 = %+v, %v; want yanked for \"broken build\"", rel, err)
	}
	checkDownload(t, again, "1.0.0", v1)
	checkDownload(t, again, "1.1.0", v2) // a yanked version stays downloadable
}

// startOn starts a registry on the PostgreSQL database dsn and the blob store blobs, with
// a fresh local data directory.
func startOn(t *testing.T, dsn string, blobs ingest.Blobs, listPath string) *env {
	t.Helper()
	ctx := context.Background()
	l, probs, err := index.LoadList(listPath)
	if err != nil || probs.HasErrors() {
		t.Fatalf("list: %v %v", err, probs)
	}
	dir := t.TempDir()
	st, err := store.OpenURL(ctx, dsn, filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e := &env{t: t, dir: dir, st: st, list: listPath}
	e.srv = httptest.NewUnstartedServer(nil)
	publicURL := "http://" + e.srv.Listener.Addr().String()
	e.svc = ingest.New(st, l, ingest.Config{PublicURL: publicURL, Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits(), Blobs: blobs}, log)
	t.Cleanup(e.svc.Close)
	if err := e.svc.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	e.srv.Config.Handler = server.New(server.Config{PublicURL: publicURL, AdminSecret: adminToken, MaxBodyBytes: 2 << 20}, e.svc, e.st, log)
	e.srv.Start()
	t.Cleanup(e.close)
	return e
}

// checkDownload downloads acme-hello@version and compares it with data.
func checkDownload(t *testing.T, e *env, version string, data []byte) {
	t.Helper()
	r := e.get("/packages/acme-hello/acme-hello-" + version + ".tar.gz")
	sum := sha256.Sum256(r.Body)
	if r.Status != http.StatusOK || hex.EncodeToString(sum[:]) != sha(data) {
		t.Errorf("download %s: %d, %d bytes hashing to %x; want 200 with the %d published bytes", version, r.Status, len(r.Body), sum, len(data))
	}
}

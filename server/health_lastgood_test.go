package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

// newEnvCapped starts a registry on dir (made by newEnv) whose index cap is maxIndexBytes,
// starting as `registry serve` does: when the first rebuild fails, it serves the last good
// documents.
func newEnvCapped(t *testing.T, dir string, maxIndexBytes int) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{t: t, dir: dir, list: filepath.Join(dir, "plugins.yaml")}
	l, probs, err := index.LoadList(e.list)
	if err != nil || probs.HasErrors() {
		t.Fatalf("list: %v %v", err, probs)
	}
	if e.st, err = store.Open(ctx, filepath.Join(dir, "data")); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e.srv = httptest.NewUnstartedServer(nil)
	publicURL := "http://" + e.srv.Listener.Addr().String()
	e.svc = ingest.New(e.st, l, ingest.Config{PublicURL: publicURL, Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits(),
		MaxIndexBytes: maxIndexBytes}, log)
	t.Cleanup(e.svc.Close) // its background writes end before the test data is removed
	if err := e.svc.Rebuild(ctx); err != nil {
		if _, err := e.svc.ServeLastGood(ctx, err); err != nil {
			t.Fatal(err)
		}
	}
	e.srv.Config.Handler = server.New(server.Config{PublicURL: publicURL, AdminSecret: adminToken, MaxBodyBytes: 2 << 20}, e.svc, e.st, log)
	e.srv.Start()
	t.Cleanup(e.close)
	return e
}

type readyBody struct {
	Ready  bool
	Status string
	Checks map[string]string
	Index  struct {
		Source  string
		Serial  int64
		Entries int
		Reason  string
	}
}

func publishHello(t *testing.T, e *env) {
	t.Helper()
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
}

// A restart on data that cannot make a valid index serves the last good bytes, keeps pages,
// API and downloads working, and says why in /readyz and the admin API.
func TestRestartOnPoisonedDataServesTheLastGoodIndex(t *testing.T) {
	dir := t.TempDir()
	first := newEnv(t, dir)
	publishHello(t, first)
	kandev, curupira := first.get("/index.json"), first.get("/curupira/index.json")
	first.close()

	e := newEnvCapped(t, dir, 64)
	for path, want := range map[string]response{"/index.json": kandev, "/curupira/index.json": curupira} {
		got := e.get(path)
		if got.Status != http.StatusOK || string(got.Body) != string(want.Body) || got.Header.Get("ETag") != want.Header.Get("ETag") {
			t.Errorf("%s: %d ETag %s %s\nwant the last good bytes, ETag %s %s", path, got.Status, got.Header.Get("ETag"), got.Body, want.Header.Get("ETag"), want.Body)
		}
	}
	var ready readyBody
	r := e.get("/readyz")
	r.json(t, &ready)
	if r.Status != http.StatusOK || !ready.Ready || ready.Status != "degraded" || ready.Index.Source != ingest.SourceLastGood ||
		ready.Index.Entries != 1 || !strings.Contains(ready.Index.Reason, "64-byte host cap") {
		t.Errorf("readyz: %d %+v\nwant 200, degraded, last-good, 1 entry, the cap as the reason", r.Status, ready)
	}
	var status struct{ Refusal *ingest.IndexRefusal }
	r = e.get("/api/v1/admin/index", "Authorization", "Bearer "+adminToken)
	r.json(t, &status)
	if status.Refusal == nil || !strings.Contains(status.Refusal.Reason, "64-byte host cap") || !strings.Contains(status.Refusal.Reason, "last good") {
		t.Errorf("admin index status does not show the refusal: %s", r.Body)
	}
	for _, path := range []string{"/", "/plugins/acme-hello", "/api/v1/plugins/acme-hello", "/packages/acme-hello/acme-hello-1.0.0.tar.gz"} {
		if r := e.get(path); r.Status != http.StatusOK {
			t.Errorf("%s while degraded: %d %s", path, r.Status, r.Body)
		}
	}
}

// Poisoned data in a directory that never had a good index: an empty valid index, and the
// replica is not ready.
func TestStartWithoutLastGoodServesAnEmptyIndex(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugins.yaml"), []byte(testList), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnvCapped(t, dir, 64)
	r := e.get("/index.json")
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"plugins":[]`) {
		t.Errorf("index.json: %d %s, want an empty valid index", r.Status, r.Body)
	}
	if probs := index.CheckKandev(r.Body); probs.HasErrors() {
		t.Errorf("empty index.json: %v", probs)
	}
	var ready readyBody
	r = e.get("/readyz")
	r.json(t, &ready)
	if r.Status != http.StatusServiceUnavailable || ready.Ready || ready.Status != "unavailable" || ready.Index.Source != ingest.SourceEmpty ||
		!strings.Contains(ready.Checks["index"], "empty index") {
		t.Errorf("readyz: %d %+v\nwant 503, unavailable, source empty", r.Status, ready)
	}
}

// A plugins.yaml reload whose index would exceed the cap is not refused: the size policy
// fits index.json within it, partial, and the registry stays ready.
func TestReloadOverTheCapLandsPartial(t *testing.T) {
	dir := t.TempDir()
	first := newEnv(t, dir)
	publishHello(t, first)
	size := len(first.get("/index.json").Body)
	long := strings.Repeat("a long description ", 40)
	if r := first.publish(adminToken, "acme-other-1.0.0.tar.gz", pkg(t, "acme-other", "1.0.0", long)); r.Status != http.StatusCreated {
		t.Fatalf("publish acme-other: %d %s", r.Status, r.Body)
	}
	first.close()
	helloOnly := testList[:strings.Index(testList, "  - id: acme-other")]
	if err := os.WriteFile(filepath.Join(dir, "plugins.yaml"), []byte(helloOnly), 0o644); err != nil {
		t.Fatal(err)
	}

	e := newEnvCapped(t, dir, size+500) // under both entries in full, over one compact
	full, probs := index.ParseList([]byte(testList))
	if probs.HasErrors() {
		t.Fatal(probs)
	}
	if err := e.svc.SetList(context.Background(), full, "test"); err != nil {
		t.Fatalf("a reload over the cap was refused: %v", err)
	}
	var ready readyBody
	r := e.get("/readyz")
	r.json(t, &ready)
	if r.Status != http.StatusOK || !ready.Ready || ready.Status != "ok" || ready.Index.Source != "built" {
		t.Errorf("readyz after the reload: %d %+v\nwant 200, ok, built", r.Status, ready)
	}
	for _, id := range []string{"acme-hello", "acme-other"} {
		assertReachable(t, e, id, size+500)
	}
}

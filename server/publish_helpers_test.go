package server_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

// fileNameOf is the name a package must be uploaded under, read from its manifest.
func fileNameOf(t *testing.T, data []byte) string {
	t.Helper()
	rep, err := verify.Package(context.Background(), bytes.NewReader(data), verify.Options{})
	if err != nil || rep.ID == "" || rep.Version == "" {
		t.Fatalf("fileNameOf: %v (id %q, version %q)", err, rep.ID, rep.Version)
	}
	return ingest.PackageFileName(rep.ID, rep.Version)
}

// newPublishEnv starts a registry like newEnv with its pipeline configured by adjust, and
// logs into log (discarded when nil).
func newPublishEnv(t *testing.T, adjust func(*ingest.Config), log *slog.Logger) *env {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	listPath := filepath.Join(dir, "plugins.yaml")
	if err := os.WriteFile(listPath, []byte(testList), 0o644); err != nil {
		t.Fatal(err)
	}
	l, probs, err := index.LoadList(listPath)
	if err != nil || probs.HasErrors() {
		t.Fatalf("list: %v %v", err, probs)
	}
	st, err := store.Open(ctx, filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	e := &env{t: t, dir: dir, st: st, list: listPath}
	e.srv = httptest.NewUnstartedServer(nil)
	publicURL := "http://" + e.srv.Listener.Addr().String()
	cfg := ingest.Config{PublicURL: publicURL, Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits()}
	if adjust != nil {
		adjust(&cfg)
	}
	e.svc = ingest.New(st, l, cfg, log)
	t.Cleanup(e.svc.Close)
	if err := e.svc.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	e.srv.Config.Handler = server.New(server.Config{PublicURL: publicURL, AdminSecret: adminToken, MaxBodyBytes: 2 << 20}, e.svc, log)
	e.srv.Start()
	t.Cleanup(e.close)
	return e
}

// logBuffer collects log lines, safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// spoolFiles lists what is left in the blob store's temporary folder.
func spoolFiles(t *testing.T, e *env) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(e.dir, "data", "blobs", "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, en := range entries {
		out = append(out, en.Name())
	}
	return out
}

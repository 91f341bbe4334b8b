package server_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

// lockedBuffer is a log destination tests read while the server writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newLoggedEnv is newEnv with the server's log kept, for tests of what the operator is told.
func newLoggedEnv(t *testing.T) (*env, *lockedBuffer) {
	t.Helper()
	dir := t.TempDir()
	listPath := filepath.Join(dir, "plugins.yaml")
	if err := os.WriteFile(listPath, []byte(testList), 0o644); err != nil {
		t.Fatal(err)
	}
	l, probs, err := index.LoadList(listPath)
	if err != nil || probs.HasErrors() {
		t.Fatalf("list: %v %v", err, probs)
	}
	st, err := store.Open(context.Background(), filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dir: dir, st: st, list: listPath}
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	e.srv = httptest.NewUnstartedServer(nil)
	publicURL := "http://" + e.srv.Listener.Addr().String()
	e.svc = ingest.New(st, l, ingest.Config{PublicURL: publicURL, Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits()}, log)
	t.Cleanup(e.svc.Close) // its background writes end before the test data is removed
	if err := e.svc.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.srv.Config.Handler = server.New(server.Config{PublicURL: publicURL, AdminSecret: adminToken, MaxBodyBytes: 2 << 20}, e.svc, e.st, log)
	e.srv.Start()
	t.Cleanup(e.close)
	return e, logs
}

// TestDamagedBlobsAreNotServed truncates and deletes package and icon blobs: each
// download answers 503 naming the sha256, and an ERROR log line names it for the operator.
func TestDamagedBlobsAreNotServed(t *testing.T) {
	tests := []struct {
		name, blob, state string
		harm              func(path string) error
	}{
		{"truncated package", "package", "corrupt", func(p string) error { return os.Truncate(p, 100) }},
		{"deleted package", "package", "missing", os.Remove},
		{"emptied package", "package", "corrupt", func(p string) error { return os.Truncate(p, 0) }},
		{"truncated icon", "icon", "corrupt", func(p string) error { return os.Truncate(p, 10) }},
		{"deleted icon", "icon", "missing", os.Remove},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, logs := newLoggedEnv(t)
			iconPath, pkgSHA := e.publishIcon("acme-hello", "icon.png", pngIcon(t, 8))
			path, sha := "/packages/acme-hello/acme-hello-1.0.0.tar.gz", pkgSHA
			if tt.blob == "icon" {
				path, sha = iconPath, strings.TrimSuffix(strings.TrimPrefix(iconPath, "/icons/"), ".png")
			}
			if r := e.get(path); r.Status != http.StatusOK {
				t.Fatalf("before the damage: %d", r.Status)
			}
			if err := tt.harm(e.st.Blobs.Path(sha)); err != nil {
				t.Fatal(err)
			}
			r := e.get(path)
			var body apiErr
			r.json(t, &body)
			if r.Status != http.StatusServiceUnavailable || !strings.Contains(body.Error, sha) || !strings.Contains(body.Error, tt.state) {
				t.Errorf("GET: %d %q; want 503 naming %s as %s", r.Status, body.Error, sha, tt.state)
			}
			if r.Header.Get("ETag") != "" {
				t.Errorf("the refusal carries the blob's ETag: %v", r.Header)
			}
			req, _ := http.NewRequest(http.MethodHead, e.srv.URL+path, nil)
			if h := e.do(req); h.Status != http.StatusServiceUnavailable {
				t.Errorf("HEAD: %d", h.Status)
			}
			line := logLine(logs.String(), "sha256="+sha)
			if !strings.Contains(line, "level=ERROR") || !strings.Contains(line, "state="+tt.state) {
				t.Errorf("no ERROR log line naming sha256=%s as %s:\n%s", sha, tt.state, logs)
			}
		})
	}
}

func logLine(logs, needle string) string {
	for l := range strings.Lines(logs) {
		if strings.Contains(l, needle) {
			return l
		}
	}
	return ""
}

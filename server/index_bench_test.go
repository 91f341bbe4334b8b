package server_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/pluginyard/registry/examples"
	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

// BenchmarkIndexGzip serves /index.json with Accept-Encoding: gzip through the whole
// middleware chain (request id, metrics, request log as JSON, security headers, rate
// limits), as bench/scale's gzip phase does: "chain" calls the handler with a response
// writer that discards (the Go side of a request: allocations, headers, log formatting;
// two of its allocations are the benchmark's writer and header map, four the header map
// growing to the response's 13 fields), "routed" the same through echo's router and
// per-request middleware (the path before the fast path, index_fast.go), "loopback" goes
// through a keep-alive TCP connection and net/http.
func BenchmarkIndexGzip(b *testing.B) {
	h, url := newIndexBenchRegistry(b)
	b.Run("chain", func(b *testing.B) {
		req := httptest.NewRequest(http.MethodGet, "/index.json", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		b.ReportAllocs()
		for b.Loop() {
			w := &countingWriter{h: http.Header{}}
			h.ServeHTTP(w, req)
			if w.code != http.StatusOK || w.n == 0 {
				b.Fatalf("status %d, %d bytes", w.code, w.n)
			}
		}
	})
	b.Run("routed", func(b *testing.B) { // the same request through echo's router, as before the fast path
		s := h.(*server.Server)
		req := httptest.NewRequest(http.MethodGet, "/index.json", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		b.ReportAllocs()
		for b.Loop() {
			w := &countingWriter{h: http.Header{}}
			s.ServeRouted(w, req)
			if w.code != http.StatusOK || w.n == 0 {
				b.Fatalf("status %d, %d bytes", w.code, w.n)
			}
		}
	})
	b.Run("loopback", func(b *testing.B) {
		c := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 1}}
		defer c.CloseIdleConnections()
		b.ReportAllocs()
		for b.Loop() {
			req, _ := http.NewRequest(http.MethodGet, url+"/index.json", nil)
			req.Header.Set("Accept-Encoding", "gzip")
			res, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
			if res.StatusCode != http.StatusOK || res.Header.Get("Content-Encoding") != "gzip" {
				b.Fatalf("status %d, encoding %q", res.StatusCode, res.Header.Get("Content-Encoding"))
			}
			b.SetBytes(n)
		}
	})
}

// countingWriter is a ResponseWriter that keeps the status and counts the body.
type countingWriter struct {
	h    http.Header
	code int
	n    int
}

func (w *countingWriter) Header() http.Header { return w.h }

func (w *countingWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(p)
	return len(p), nil
}

// newIndexBenchRegistry serves the demo list with every example published, logging every
// request as JSON (to nowhere), and returns its handler and URL.
func newIndexBenchRegistry(b *testing.B) (http.Handler, string) {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	listPath := filepath.Join(dir, "plugins.yaml")
	list, err := os.ReadFile("../plugins.yaml")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(listPath, list, 0o644); err != nil {
		b.Fatal(err)
	}
	l, probs, err := index.LoadList(listPath)
	if err != nil || probs.HasErrors() {
		b.Fatalf("list: %v %v", err, probs)
	}
	st, err := store.Open(ctx, filepath.Join(dir, "data"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	srv := httptest.NewUnstartedServer(nil)
	publicURL := "http://" + srv.Listener.Addr().String()
	svc := ingest.New(st, l, ingest.Config{PublicURL: publicURL, Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits()}, log)
	b.Cleanup(svc.Close)
	if err := svc.Rebuild(ctx); err != nil {
		b.Fatal(err)
	}
	h := server.New(server.Config{PublicURL: publicURL, AdminSecret: adminToken, MaxBodyBytes: 4 << 20}, svc, st, log)
	srv.Config.Handler = h
	srv.Start()
	b.Cleanup(srv.Close)
	for _, name := range examples.Names() {
		var buf bytes.Buffer
		if err := examples.Pack(name, &buf); err != nil {
			b.Fatal(err)
		}
		benchPublish(b, srv.URL, "", buf.Bytes())
	}
	return h, srv.URL
}

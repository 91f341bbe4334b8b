package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

// BenchmarkListing serves the home page and a filtered search over catalogs of growing
// size: the category counts are one query over the matching rows, and each card shown
// (at most a page, 24) costs one releases lookup for its yanked state.
func BenchmarkListing(b *testing.B) {
	for _, n := range []int{6, 24, 96, 384} {
		url := newListingBench(b, n)
		for _, path := range []string{"/", "/?kind=plugin&q=bench", "/?category=tools"} {
			b.Run(fmt.Sprintf("packages=%d%s", n, path), func(b *testing.B) {
				for b.Loop() {
					res, err := http.Get(url + path)
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, res.Body)
					_ = res.Body.Close()
					if res.StatusCode != http.StatusOK {
						b.Fatalf("GET %s: %d", path, res.StatusCode)
					}
				}
			})
		}
	}
}

var benchCategories = []string{"connector", "automation", "tools", "analytics"}

// newListingBench serves a registry listing n plugins, one release each, in rotating
// categories.
func newListingBench(b *testing.B, n int) string {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	var list strings.Builder
	list.WriteString("plugins:\n")
	for i := range n {
		fmt.Fprintf(&list, "  - id: bench-%04d\n    repo: acme/bench-%04d\n    owners: [acme]\n", i, i)
	}
	listPath := filepath.Join(dir, "plugins.yaml")
	if err := os.WriteFile(listPath, []byte(list.String()), 0o644); err != nil {
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
	srv := httptest.NewUnstartedServer(nil)
	publicURL := "http://" + srv.Listener.Addr().String()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := ingest.New(st, l, ingest.Config{PublicURL: publicURL, Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits()}, log)
	for i := range n {
		data := benchPackage(b, fmt.Sprintf("bench-%04d", i), benchCategories[i%len(benchCategories)])
		if _, err := svc.Publish(ctx, ingest.PublishInput{Package: bytes.NewReader(data), Actor: ingest.Actor{Name: "admin", Admin: true}}); err != nil {
			b.Fatalf("publish bench-%04d: %v", i, err)
		}
	}
	srv.Config.Handler = server.New(server.Config{PublicURL: publicURL, MaxBodyBytes: 2 << 20}, svc, st, log)
	srv.Start()
	b.Cleanup(func() { srv.Close(); _ = st.Close() })
	return publicURL
}

func benchPackage(b *testing.B, id, category string) []byte {
	b.Helper()
	manifest := "id: " + id + "\napi_version: 2\nversion: \"1.0.0\"\ndisplay_name: Bench " + id + "\ndescription: A bench plugin\n" +
		"author: Acme\ncategories: [" + category + "]\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	fsys := fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: []byte("#!/bin/sh\necho hello\n"), Mode: 0o755},
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pluginyard/registry/bench/catalog"
	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

// BenchmarkPagesAtScale serves the listing pages over catalogues of 1k, 10k and 50k
// plugins (bench/catalog's list; releases written to the store directly, not published
// through HTTP) and reports each page's p50 and p99 in milliseconds, plus the heap the
// catalogue holds per 1,000 plugins (after a GC, once the catalog and its views are
// built). A page's cost should not grow with the catalogue.
func BenchmarkPagesAtScale(b *testing.B) {
	sizes := []int{1000, 10000, 50000}
	if v := os.Getenv("PAGES_BENCH_SIZES"); v != "" { // e.g. "1000" for a quick run
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			var n int
			if _, err := fmt.Sscan(f, &n); err != nil {
				b.Fatalf("PAGES_BENCH_SIZES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	rare := "000042" // the id suffix of one plugin: in its id and display name only
	paths := []string{"/", "/?sort=downloads&page=3", "/categories/tools", "/categories/tools?page=5",
		"/?q=" + catalog.CommonWord, "/?q=" + catalog.CommonWord + "&sort=name", "/?q=" + rare,
		"/publishers/" + catalog.Publisher(0), "/publishers/" + catalog.Publisher(0) + "?page=2", "/api/v1/plugins?q=" + catalog.CommonWord}
	for _, n := range sizes {
		url, perK := newScaleRegistry(b, n)
		for _, path := range paths {
			b.Run(fmt.Sprintf("plugins=%d%s", n, path), func(b *testing.B) {
				var d []time.Duration
				var size int64
				for b.Loop() {
					start := time.Now()
					res, err := http.Get(url + path)
					if err != nil {
						b.Fatal(err)
					}
					size, _ = io.Copy(io.Discard, res.Body)
					_ = res.Body.Close()
					if res.StatusCode != http.StatusOK {
						b.Fatalf("GET %s: %d", path, res.StatusCode)
					}
					d = append(d, time.Since(start))
				}
				reportPercentiles(b, d)
				b.ReportMetric(perK, "heap-MB/1k-plugins")
				b.ReportMetric(float64(size), "bytes/page")
			})
		}
	}
}

// reportPercentiles reports the p50 and p99 of d in milliseconds.
func reportPercentiles(b *testing.B, d []time.Duration) {
	b.Helper()
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	at := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))].Microseconds()) / 1000 }
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// newScaleRegistry serves a registry listing bench/catalog's first n plugins, one release
// each, written to the store directly (one shared package blob: pages never read it), and
// returns its URL and the heap in MB that the built catalog holds per 1,000 plugins.
func newScaleRegistry(b testing.TB, n int) (string, float64) {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	listPath := filepath.Join(dir, "plugins.yaml")
	if err := os.WriteFile(listPath, catalog.List(n, nil), 0o644); err != nil {
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
	seedScaleStore(b, st, n)
	srv := httptest.NewUnstartedServer(nil)
	publicURL := "http://" + srv.Listener.Addr().String()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	before := heapInUse()
	// MaxIndexBytes: pages are measured here, not the index size policy (a catalogue past
	// the host limit is the policy's own benchmark).
	svc := ingest.New(st, l, ingest.Config{PublicURL: publicURL, Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits(), MaxIndexBytes: 1 << 30}, log)
	if err := svc.Rebuild(ctx); err != nil {
		b.Fatal(err)
	}
	svc.Catalog().Views()
	perK := float64(heapInUse()-before) / (1 << 20) / (float64(n) / 1000)
	// The search budget is a client's, not the server's: one benchmark client would spend it.
	srv.Config.Handler = server.New(server.Config{PublicURL: publicURL, AdminSecret: adminToken, MaxBodyBytes: 4 << 20,
		RateLimits: server.RateLimits{Search: 1 << 30}}, svc, st, log)
	srv.Start()
	b.Cleanup(srv.Close)
	return srv.URL, perK
}

// heapInUse is the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// seedScaleStore records plugin i of bench/catalog (its manifest, as catalog.Package
// writes it) for i < n, all pointing at one stored blob.
func seedScaleStore(b testing.TB, st *store.Store, n int) {
	b.Helper()
	ctx := context.Background()
	blob, err := catalog.Package(0, "1.0.0", nil)
	if err != nil {
		b.Fatal(err)
	}
	sha, err := st.Blobs.Put(blob)
	if err != nil {
		b.Fatal(err)
	}
	sum := sha256.Sum256(blob)
	if sha != hex.EncodeToString(sum[:]) {
		b.Fatalf("blob sha %s", sha)
	}
	for i := range n {
		rel := &store.Release{PackageID: catalog.ID(i), Version: "1.0.0", Kind: "plugin", SHA256: sha, Size: int64(len(blob)),
			Manifest: []byte(scaleManifest(i)), PublishedBy: "bench", Facts: &store.Facts{}}
		if err := rel.SetREADME([]byte("# " + catalog.ID(i) + "\n")); err != nil {
			b.Fatal(err)
		}
		audit := store.AuditEntry{Actor: "bench", Action: "publish", Target: rel.PackageID + "@1.0.0", Outcome: "ok"}
		if _, err := st.InsertRelease(ctx, rel, audit); err != nil {
			b.Fatal(err)
		}
	}
}

// scaleManifest is the manifest catalog.Package writes for plugin i at 1.0.0.
func scaleManifest(i int) string {
	id, word := catalog.ID(i), catalog.Words[i%len(catalog.Words)]
	title := strings.ToUpper(word[:1]) + word[1:]
	return "id: " + id + "\napi_version: 2\nversion: \"1.0.0\"\n" +
		"display_name: " + title + " " + id[len(id)-6:] + "\n" +
		"description: Generated " + word + " plugin for the " + catalog.CommonWord + " scale benchmark\n" +
		"author: Bench " + catalog.Publisher(i) + "\ncategories: [" + catalog.Category(i) + "]\n" +
		"runtime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
}

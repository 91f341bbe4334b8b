package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

// previewHost is a fake image host on loopback: /cover.png is a PNG, sent once gate is
// closed; /gone.png a 404. It counts every request.
type previewHost struct {
	*httptest.Server
	png  []byte
	gate chan struct{}
	hits atomic.Int64
}

func newPreviewHost(t *testing.T) *previewHost {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 8, 5))); err != nil {
		t.Fatal(err)
	}
	h := &previewHost{png: buf.Bytes(), gate: make(chan struct{})}
	close(h.gate)
	h.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.hits.Add(1)
		if r.URL.Path == "/cover.png" {
			<-h.gate
			_, _ = w.Write(h.png)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(h.Close)
	return h
}

// newPreviewEnv is a registry listing acme-hello with previews at the given paths of host,
// copying previews from host only.
func newPreviewEnv(t *testing.T, host *previewHost, paths ...string) *env {
	t.Helper()
	dir := t.TempDir()
	list := "plugins:\n  - id: acme-hello\n    repo: acme/kandev-plugin-hello\n    owners: [acme]\n    previews:\n"
	for i, p := range paths {
		list += "      - url: " + host.URL + p + "\n        alt: Board view " + string(rune('A'+i)) + "\n"
	}
	listPath := filepath.Join(dir, "plugins.yaml")
	if err := os.WriteFile(listPath, []byte(list), 0o644); err != nil {
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
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e.srv = httptest.NewUnstartedServer(nil)
	publicURL := "http://" + e.srv.Listener.Addr().String()
	e.svc = ingest.New(st, l, ingest.Config{PublicURL: publicURL, Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits(),
		Previews: ingest.PreviewConfig{Hosts: []string{strings.TrimPrefix(host.URL, "https://")}, Transport: host.Client().Transport}}, log)
	t.Cleanup(e.svc.Close)
	e.srv.Config.Handler = server.New(server.Config{PublicURL: publicURL, AdminSecret: adminToken, MaxBodyBytes: 2 << 20}, e.svc, e.st, log)
	e.srv.Start()
	t.Cleanup(e.close)
	return e
}

func (e *env) waitPreviews() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.svc.WaitPreviews(ctx); err != nil {
		e.t.Fatal(err)
	}
}

// galleryOf returns the plugin page's gallery: the img srcs and the placeholders' labels.
func galleryOf(t *testing.T, e *env, id string) (srcs, placeholders []string, page string) {
	t.Helper()
	r := e.get("/plugins/" + id)
	if r.Status != http.StatusOK {
		t.Fatalf("plugin page: %d", r.Status)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatal(err)
	}
	doc.Find(`[data-testid="previews"] img`).Each(func(_ int, s *goquery.Selection) { srcs = append(srcs, s.AttrOr("src", "")) })
	doc.Find(`[data-testid="previews"] [data-testid="preview-placeholder"]`).Each(func(_ int, s *goquery.Selection) {
		placeholders = append(placeholders, s.AttrOr("aria-label", "")+"|"+strings.TrimSpace(s.Find("span").Text()))
	})
	return srcs, placeholders, string(r.Body)
}

// TestPreviewPages: before the copy exists the page draws placeholders; after it, the
// page shows the registry's copy, /previews/ serves it like an icon, and a failed preview
// stays a placeholder. The remote URL is never an <img src>, and index.json keeps it.
func TestPreviewPages(t *testing.T) {
	host := newPreviewHost(t)
	host.gate = make(chan struct{}) // the cover is not sent until the first page is seen
	e := newPreviewEnv(t, host, "/cover.png", "/gone.png")
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	srcs, placeholders, page := galleryOf(t, e, "acme-hello")
	if len(srcs) != 0 || len(placeholders) != 2 || placeholders[0] != "Board view A|Board view A" {
		t.Errorf("before the fetch: imgs %q, placeholders %q; want two placeholders with the alt text", srcs, placeholders)
	}
	if strings.Contains(page, host.URL) {
		t.Errorf("the page names the remote host %s before the fetch", host.URL)
	}
	close(host.gate)
	e.waitPreviews()
	sha := sha256.Sum256(host.png)
	local := "/previews/" + hex.EncodeToString(sha[:]) + ".png"
	srcs, placeholders, page = galleryOf(t, e, "acme-hello")
	if len(srcs) != 1 || srcs[0] != local {
		t.Errorf("after the fetch: imgs %q, want [%s]", srcs, local)
	}
	if len(placeholders) != 1 || placeholders[0] != "Board view B|Board view B" {
		t.Errorf("after the failed fetch: placeholders %q, want the second preview's", placeholders)
	}
	if strings.Contains(page, host.URL) {
		t.Errorf("the page names the remote host %s", host.URL)
	}
	if p, _ := e.svc.Preview(host.URL + "/gone.png"); p == nil || p.Rule != ingest.RulePreviewStatus {
		t.Errorf("record of the failed preview: %+v", p)
	}

	r := e.get(local)
	if r.Status != http.StatusOK || !bytes.Equal(r.Body, host.png) {
		t.Fatalf("GET %s: %d, %d bytes; want 200 and the image", local, r.Status, len(r.Body))
	}
	for k, v := range map[string]string{"Content-Type": "image/png", "Etag": `"` + hex.EncodeToString(sha[:]) + `"`,
		"Cache-Control": "public, max-age=31536000, immutable", "X-Content-Type-Options": "nosniff"} {
		if got := r.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if r := e.get(local, "If-None-Match", `"`+hex.EncodeToString(sha[:])+`"`); r.Status != http.StatusNotModified {
		t.Errorf("conditional GET: %d, want 304", r.Status)
	}
	head, err := http.NewRequest(http.MethodHead, e.srv.URL+local, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.do(head); r.Status != http.StatusOK || r.Header.Get("Content-Type") != "image/png" || len(r.Body) != 0 {
		t.Errorf("HEAD: %d %q %d bytes", r.Status, r.Header.Get("Content-Type"), len(r.Body))
	}

	var doc struct {
		Plugins []struct {
			Previews []map[string]string `json:"previews"`
		} `json:"plugins"`
	}
	e.get("/index.json").json(t, &doc)
	if len(doc.Plugins) != 1 || len(doc.Plugins[0].Previews) != 2 || doc.Plugins[0].Previews[0]["url"] != host.URL+"/cover.png" {
		t.Errorf("index.json previews %+v, want the plugins.yaml URLs hosts fetch", doc.Plugins)
	}
	if n := host.hits.Load(); n != 2 {
		t.Errorf("the image host got %d requests, want 2 (one per preview)", n)
	}
}

// TestPreviewURLs: /previews/ serves a listed copy under its type's extension only, and
// no other blob.
func TestPreviewURLs(t *testing.T) {
	host := newPreviewHost(t)
	e := newPreviewEnv(t, host, "/cover.png")
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	e.waitPreviews()
	sum := sha256.Sum256(host.png)
	sha := hex.EncodeToString(sum[:])
	rel, err := e.st.Release(context.Background(), "acme-hello", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want int
	}{
		{"/previews/" + sha + ".png", http.StatusOK},
		{"/previews/" + sha + ".jpg", http.StatusNotFound},
		{"/previews/" + sha + ".webp", http.StatusNotFound},
		{"/previews/" + sha, http.StatusNotFound},
		{"/previews/" + rel.SHA256 + ".png", http.StatusNotFound}, // the package's blob
		{"/previews/" + strings.Repeat("0", 64) + ".png", http.StatusNotFound},
		{"/previews/" + sha[:63] + ".png", http.StatusNotFound},
	}
	for _, tt := range tests {
		if r := e.get(tt.path); r.Status != tt.want {
			t.Errorf("GET %s: %d, want %d", tt.path, r.Status, tt.want)
		}
	}
}

// TestPreviewBlobMissing: a recorded copy whose file is gone is a 503 naming the blob, not
// a broken or empty image.
func TestPreviewBlobMissing(t *testing.T) {
	host := newPreviewHost(t)
	e := newPreviewEnv(t, host, "/cover.png")
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	e.waitPreviews()
	sum := sha256.Sum256(host.png)
	sha := hex.EncodeToString(sum[:])
	if err := e.st.Blobs.Remove(sha); err != nil {
		t.Fatal(err)
	}
	if r := e.get("/previews/" + sha + ".png"); r.Status != http.StatusServiceUnavailable || !strings.Contains(string(r.Body), sha) {
		t.Errorf("missing blob: %d %s, want 503 naming it", r.Status, r.Body)
	}
}

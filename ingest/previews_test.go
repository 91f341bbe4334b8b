package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/store"
)

// imageHost is a fake image host on loopback (TLS, since previews are fetched over https
// only) that counts the requests each path gets.
type imageHost struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newImageHost(t testing.TB, routes map[string]http.HandlerFunc) *imageHost {
	t.Helper()
	h := &imageHost{hits: map[string]int{}}
	h.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.hits[r.URL.Path]++
		h.mu.Unlock()
		if f, ok := routes[r.URL.Path]; ok {
			f(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *imageHost) count(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[path]
}

func (h *imageHost) total() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, v := range h.hits {
		n += v
	}
	return n
}

func (h *imageHost) host() string { return strings.TrimPrefix(h.URL, "https://") }

func pngBytes(t testing.TB) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func jpegBytes(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, image.NewGray(image.Rect(0, 0, 4, 3)), nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func serve(body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }
}

// streamed sends n bytes of PNG-looking data without a Content-Length, so that only
// counting the bytes read can catch it.
func streamed(head []byte, n int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(head)
		w.(http.Flusher).Flush()
		chunk := make([]byte, 64<<10)
		for sent := len(head); sent < n; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
}

// announced sends body with a Content-Length, which is enough to refuse it unread.
func announced(body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}
}

func redirectTo(target string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, target, http.StatusFound) }
}

// previewList lists one plugin whose previews are urls, in order.
func previewList(urls ...string) *index.List {
	e := index.Entry{ID: "acme-hello", Repo: "acme/acme-hello", Kind: index.KindPlugin, Owners: []string{"acme"}}
	for i, u := range urls {
		e.Previews = append(e.Previews, index.Preview{URL: u, Alt: "Preview " + string(rune('A'+i))})
	}
	return &index.List{Plugins: []index.Entry{e}}
}

// newPreviewService is a Service whose previews come from host only.
func newPreviewService(t *testing.T, host *imageHost, l *index.List) *Service {
	t.Helper()
	return newPublishService(t, l, Config{Previews: PreviewConfig{Hosts: []string{host.host()}, Transport: host.Client().Transport}})
}

func reload(t *testing.T, s *Service, l *index.List) {
	t.Helper()
	ctx := context.Background()
	if err := s.SetList(ctx, l, "test"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := s.WaitPreviews(ctx); err != nil {
		t.Fatal(err)
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestPreviewFetchedOnce: a preview is copied at the first reload, and neither the second
// reload nor a publish asks its host again; the copy is the exact bytes, as a blob.
func TestPreviewFetchedOnce(t *testing.T) {
	img := pngBytes(t)
	host := newImageHost(t, map[string]http.HandlerFunc{"/cover.png": serve(img)})
	l := previewList(host.URL + "/cover.png")
	s := newPreviewService(t, host, l)
	if err := s.WaitPreviews(context.Background()); err != nil {
		t.Fatal(err)
	}
	reload(t, s, previewList(host.URL+"/cover.png"))
	reload(t, s, previewList(host.URL+"/cover.png"))
	publishOK(t, s, "acme-hello", "1.0.0", "Says hello")
	if err := s.WaitPreviews(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := host.count("/cover.png"); n != 1 {
		t.Errorf("the host got %d requests for the preview over a start, two reloads and a publish, want 1", n)
	}
	p, ok := s.Preview(host.URL + "/cover.png")
	if !ok || !p.Fetched() {
		t.Fatalf("no copy recorded: %+v", p)
	}
	want := &store.Preview{URL: host.URL + "/cover.png", SHA256: sha256Hex(img), ContentType: "image/png", Size: int64(len(img)), Attempts: 1}
	if diff := cmp.Diff(want, p, cmpIgnoreTimes); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
	if got, err := s.db().Blobs.ReadAll(p.SHA256); err != nil || !bytes.Equal(got, img) {
		t.Errorf("blob %s: %d bytes, %v; want the image's %d bytes", p.SHA256, len(got), err, len(img))
	}
	if size, err := s.db().BlobSize(context.Background(), p.SHA256); err != nil || size != int64(len(img)) {
		t.Errorf("blob row: size %d, %v; want %d (a blob without a row is removed at start)", size, err, len(img))
	}
	if got := s.ListedPreview(p.SHA256); got == nil || got.URL != p.URL {
		t.Errorf("ListedPreview of the listed copy = %+v, want its record", got)
	}
	if got := PreviewPath(p); got != "/previews/"+p.SHA256+".png" {
		t.Errorf("PreviewPath = %s", got)
	}
}

var cmpIgnoreTimes = cmp.FilterPath(func(p cmp.Path) bool {
	n := p.Last().String()
	return n == ".FetchedAt" || n == ".AttemptedAt"
}, cmp.Ignore())

// TestPreviewRefusals: every refusal is recorded under its rule, nothing is kept as a
// copy, and a host off the allow-list is never contacted, not even through a redirect.
func TestPreviewRefusals(t *testing.T) {
	img := pngBytes(t)
	outside := newImageHost(t, map[string]http.HandlerFunc{"/cover.png": serve(img)})
	big := append(append([]byte{}, img...), make([]byte, MaxPreviewSize)...)
	host := newImageHost(t, map[string]http.HandlerFunc{
		"/ok.jpg":        serve(jpegBytes(t)),
		"/announced.png": announced(big),
		"/streamed.png":  streamed(img, MaxPreviewSize+1<<20),
		"/limit.png":     serve(append(append([]byte{}, img...), make([]byte, MaxPreviewSize-len(img))...)),
		"/page.png":      serve([]byte("<!doctype html><html><body>not an image</body></html>")),
		"/anim.gif":      serve([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")),
		"/away.png":      redirectTo(outside.URL + "/cover.png"),
		"/plain.png": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://"+r.Host+"/ok.jpg", http.StatusFound) // an allowed host, in the clear
		},
		"/hop.png":  redirectTo("/ok.jpg"),
		"/gone.png": http.NotFound,
		"/loop.png": redirectTo("/loop.png"),
	})
	tests := []struct {
		path string
		rule string // "" for a copy
		ct   string
	}{
		{"/ok.jpg", "", "image/jpeg"},
		{"/hop.png", "", "image/jpeg"}, // a redirect within the allow-list is followed
		{"/limit.png", "", "image/png"},
		{"/announced.png", RulePreviewSize, ""},
		{"/streamed.png", RulePreviewSize, ""},
		{"/page.png", RulePreviewType, ""},
		{"/anim.gif", RulePreviewType, ""},
		{"/away.png", RulePreviewRedirect, ""},
		{"/plain.png", RulePreviewRedirect, ""},
		{"/loop.png", RulePreviewRedirect, ""},
		{"/gone.png", RulePreviewStatus, ""},
	}
	var urls []string
	for _, tt := range tests {
		urls = append(urls, host.URL+tt.path)
	}
	disallowed := outside.URL + "/cover.png"
	urls = append(urls, disallowed)
	s := newPreviewService(t, host, &index.List{})
	reload(t, s, previewList(urls...))
	for _, tt := range append(tests, struct{ path, rule, ct string }{"outside", RulePreviewHost, ""}) {
		t.Run(tt.path, func(t *testing.T) {
			u := host.URL + tt.path
			if tt.path == "outside" {
				u = disallowed
			}
			p, ok := s.Preview(u)
			if !ok {
				t.Fatalf("no record for %s", u)
			}
			t.Logf("%s %s", p.Rule, p.Error)
			if p.Rule != tt.rule || p.ContentType != tt.ct || p.Fetched() != (tt.rule == "") {
				t.Errorf("record %+v, want rule %q, type %q", p, tt.rule, tt.ct)
			}
			if tt.rule != "" && (p.Error == "" || p.SHA256 != "") {
				t.Errorf("a refusal must say why and keep no copy: %+v", p)
			}
		})
	}
	if n := outside.total(); n != 0 {
		t.Errorf("the host off the allow-list got %d requests, want none", n)
	}
	if n := host.count("/loop.png"); n != maxPreviewRedirects+1 {
		t.Errorf("a redirect loop was followed %d times, want the first request and %d redirects", n, maxPreviewRedirects)
	}
	p, _ := s.Preview(disallowed)
	if !strings.Contains(p.Error, host0(outside)) || !strings.Contains(p.Error, PreviewHostsSetting) {
		t.Errorf("a host refusal names the host and the setting to change: %s", p.Error)
	}
	for path, verb := range map[string]string{"/announced.png": "announces", "/streamed.png": "sent at least"} {
		p, _ = s.Preview(host.URL + path)
		if !strings.Contains(p.Error, verb) || !strings.Contains(p.Error, "over the 2 MiB preview limit") {
			t.Errorf("%s: the size refusal says %q, want %q and the limit", path, p.Error, verb)
		}
	}
}

func host0(h *imageHost) string { return h.host() }

// TestPreviewRetry: a failed URL is not asked again by the next reload, only once the
// retry delay has passed; a copied URL never is.
func TestPreviewRetry(t *testing.T) {
	var mu sync.Mutex
	ready := false
	img := pngBytes(t)
	host := newImageHost(t, map[string]http.HandlerFunc{"/later.png": func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if !ready {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write(img)
	}})
	u := host.URL + "/later.png"
	s := newPreviewService(t, host, &index.List{})
	clock := time.Now().UTC()
	s.previews.now = func() time.Time { return clock }
	reload(t, s, previewList(u))
	mu.Lock()
	ready = true
	mu.Unlock()
	reload(t, s, previewList(u))
	if n := host.count("/later.png"); n != 1 {
		t.Fatalf("a reload within the retry delay asked %d times, want 1", n)
	}
	if p, _ := s.Preview(u); p.Fetched() || p.Rule != RulePreviewStatus {
		t.Fatalf("record before the retry: %+v", p)
	}
	clock = clock.Add(DefaultPreviewRetry + time.Second)
	reload(t, s, previewList(u))
	reload(t, s, previewList(u))
	if n := host.count("/later.png"); n != 2 {
		t.Errorf("after the retry delay: %d requests, want 2 (one retry, then the copy is kept)", n)
	}
	if p, _ := s.Preview(u); !p.Fetched() || p.Attempts != 2 || p.Rule != "" || p.Error != "" {
		t.Errorf("record after the retry: %+v", p)
	}
}

// TestPreviewsOffByDefault: a zero PreviewConfig contacts no host, and still serves the
// copies recorded before.
func TestPreviewsOffByDefault(t *testing.T) {
	img := pngBytes(t)
	host := newImageHost(t, map[string]http.HandlerFunc{"/cover.png": serve(img)})
	s := newPublishService(t, previewList(host.URL+"/cover.png"), Config{})
	reload(t, s, previewList(host.URL+"/cover.png"))
	if n := host.total(); n != 0 {
		t.Errorf("a zero config made %d requests, want none", n)
	}
	if _, ok := s.Preview(host.URL + "/cover.png"); ok {
		t.Errorf("a zero config recorded an attempt")
	}
	sha, err := s.db().Blobs.Put(img)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db().RecordPreviewFetched(context.Background(), host.URL+"/cover.png", sha, "image/png", int64(len(img))); err != nil {
		t.Fatal(err)
	}
	reload(t, s, previewList(host.URL+"/cover.png"))
	if p, ok := s.Preview(host.URL + "/cover.png"); !ok || p.SHA256 != sha {
		t.Errorf("a copy recorded earlier is not known: %+v", p)
	}
}

// TestListedPreviewOnlyListed: /previews/ serves copies a listed package shows, nothing
// else, not even a copy of a preview the list no longer has.
func TestListedPreviewOnlyListed(t *testing.T) {
	img := pngBytes(t)
	host := newImageHost(t, map[string]http.HandlerFunc{"/cover.png": serve(img)})
	s := newPreviewService(t, host, &index.List{})
	reload(t, s, previewList(host.URL+"/cover.png"))
	sha := sha256Hex(img)
	if p := s.ListedPreview(sha); p != nil {
		t.Errorf("a copy for a package with no release is served: %+v", p)
	}
	publishOK(t, s, "acme-hello", "1.0.0", "Says hello")
	if p := s.ListedPreview(sha); p == nil {
		t.Errorf("the copy of a listed package is not served")
	}
	if p := s.ListedPreview(strings.Repeat("0", 64)); p != nil {
		t.Errorf("an unknown sha is served: %+v", p)
	}
	reload(t, s, previewList())
	if p := s.ListedPreview(sha); p != nil {
		t.Errorf("a copy the list no longer shows is served: %+v", p)
	}
}

// TestPreviewTimeout: a host that never answers costs one timeout, recorded as a fetch
// failure, and does not hold the pass forever.
func TestPreviewTimeout(t *testing.T) {
	host := newImageHost(t, map[string]http.HandlerFunc{"/hang.png": func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}})
	s := newPublishService(t, &index.List{}, Config{Previews: PreviewConfig{Hosts: []string{host.host()},
		Transport: host.Client().Transport, Timeout: 50 * time.Millisecond}})
	reload(t, s, previewList(host.URL+"/hang.png"))
	if p, ok := s.Preview(host.URL + "/hang.png"); !ok || p.Rule != RulePreviewFetch || p.Fetched() {
		t.Errorf("record of a host that never answers: %+v, want rule %s", p, RulePreviewFetch)
	}
}

package server

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
)

// TestServeBytesMatchesServeContent: the 200 serveBytes writes itself for a plain GET or
// HEAD has the status, header fields, body and counted size that http.ServeContent
// (serveContent) gives the same request, for the identity and the gzip bytes of a
// document, with and without a modification time; conditional and range requests, which
// it hands to ServeContent, are compared too.
func TestServeBytesMatchesServeContent(t *testing.T) {
	raw := bytes.Repeat([]byte(`{"plugins":[]}`), 1000)
	body := index.NewBody(splitParts(raw, "37")) // a document's parts: ranges cross them
	for _, modtime := range []time.Time{time.Date(2026, 12, 1, 14, 0, 0, 0, time.FixedZone("x", 3600)), {}} {
		d := &ingest.Document{Body: body, ETag: `"abc"`, LastModified: modtime}
		var cache docHeaderCache
		for _, encoded := range []bool{false, true} {
			for _, tc := range []struct {
				name, method string
				header       []string
			}{
				{"get", http.MethodGet, nil}, {"head", http.MethodHead, nil},
				{"empty if-none-match", http.MethodGet, []string{"If-None-Match", ""}},
				{"not modified", http.MethodGet, []string{"If-None-Match", `"abc"`}},
				{"range", http.MethodGet, []string{"Range", "bytes=3-8"}},
				{"range across parts", http.MethodGet, []string{"Range", "bytes=370-900"}},
				{"suffix range", http.MethodGet, []string{"Range", "bytes=-500"}},
				{"if-modified-since", http.MethodGet, []string{"If-Modified-Since", modtime.Add(time.Hour).UTC().Format(http.TimeFormat)}},
			} {
				serve := func(direct bool) (*httptest.ResponseRecorder, *echo.Response) {
					req := httptest.NewRequest(tc.method, "/index.json", nil)
					for i := 0; i+1 < len(tc.header); i += 2 {
						req.Header[tc.header[i]] = []string{tc.header[i+1]}
					}
					w := httptest.NewRecorder()
					c := echo.New().NewContext(req, w)
					c.Response().Header().Set("Content-Type", "application/json") // as serveDoc sets it
					c.Response().Header().Set("Etag", d.ETag)
					if encoded {
						c.Response().Header().Set("Content-Encoding", "gzip")
					}
					if !direct {
						n := int64(0)
						if encoded {
							n = int64(len(raw))
						}
						serveContent(c, modtime, bytes.NewReader(raw), n)
						return w, c.Response()
					}
					serveBytes(c, cache.of(d, encoded, body), modtime, body, encoded)
					return w, c.Response()
				}
				want, wantRes := serve(false)
				got, gotRes := serve(true)
				type answer struct {
					Status       int
					Header       http.Header
					Body         []byte
					Counted      int64
					CountedState int
				}
				if diff := cmp.Diff(answer{want.Code, want.Header(), want.Body.Bytes(), wantRes.Size, wantRes.Status},
					answer{got.Code, got.Header(), got.Body.Bytes(), gotRes.Size, gotRes.Status}); diff != "" {
					t.Errorf("modtime %v, gzip %v, %s: serveBytes differs from ServeContent (-ServeContent +serveBytes):\n%s", modtime, encoded, tc.name, diff)
				}
			}
		}
	}
}

// TestDocHeaderCacheIsBounded: the cache of header values starts again once it holds
// docHeaderCacheMax documents, and a document's values are its own.
func TestDocHeaderCacheIsBounded(t *testing.T) {
	var dc docHeaderCache
	docs := make([]*ingest.Document, docHeaderCacheMax+10)
	for i := range docs {
		docs[i] = &ingest.Document{Body: index.BodyOf(make([]byte, i)), ETag: `"e` + strconv.Itoa(i) + `"`}
		v := dc.of(docs[i], i%2 == 0, docs[i].Body)
		if v.length[0] != strconv.Itoa(i) {
			t.Fatalf("doc %d: Content-Length %q", i, v.length[0])
		}
	}
	n := 0
	dc.identity.Range(func(any, any) bool { n++; return true })
	dc.gzip.Range(func(any, any) bool { n++; return true })
	if n > docHeaderCacheMax {
		t.Errorf("cache holds %d entries, want at most %d", n, docHeaderCacheMax)
	}
	if v := dc.of(docs[1], true, index.BodyOf([]byte("xy"))); v.etag[0] != `"e1-gzip"` || v.length[0] != "2" {
		t.Errorf("gzip values of doc 1: %v %v", v.etag, v.length)
	}
}

// TestDocHeaderCacheKeepsNoDocument: a document whose header values are cached is freed
// once nothing else refers to it (a 5 MiB index.json per publish must not stay alive).
func TestDocHeaderCacheKeepsNoDocument(t *testing.T) {
	var dc docHeaderCache
	freed := make(chan struct{})
	func() {
		d := &ingest.Document{Body: index.BodyOf(make([]byte, 1<<20)), ETag: `"kept?"`, LastModified: time.Unix(1e9, 0)}
		runtime.AddCleanup(d, func(ch chan struct{}) { close(ch) }, freed)
		dc.of(d, false, d.Body)
		dc.of(d, true, index.BodyOf(make([]byte, 10)))
	}()
	for deadline := time.Now().Add(10 * time.Second); ; { // a liveness bound, not a timing assertion
		runtime.GC()
		select {
		case <-freed:
			if v := dc.of(&ingest.Document{Body: index.BodyOf(make([]byte, 7)), ETag: `"kept?"`, LastModified: time.Unix(1e9, 0)}, false, index.Body{}); v.length[0] != "1048576" {
				t.Errorf("values of a document with the same ETag and time: length %v, want the cached 1048576", v.length)
			}
			return
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("a document whose header values are cached was never freed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// manyRanges is a Range header of n one-byte ranges, apart from one another.
func manyRanges(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strconv.Itoa(2*i) + "-" + strconv.Itoa(2*i)
	}
	return "bytes=" + strings.Join(parts, ",")
}

// TestDocumentRangesAreBounded: a document asked for in at most maxRanges ranges gets them
// (206); asked for in more (a 64 KiB header holds thousands), it is answered whole, as a
// package download is.
func TestDocumentRangesAreBounded(t *testing.T) {
	raw := bytes.Repeat([]byte(`{"plugins":[]}`), 1000)
	body := index.NewBody(splitParts(raw, "100"))
	d := &ingest.Document{Body: body, ETag: `"abc"`, LastModified: time.Unix(1e9, 0)}
	var cache docHeaderCache
	for _, tc := range []struct {
		ranges, status int
	}{{2, http.StatusPartialContent}, {maxRanges, http.StatusPartialContent}, {maxRanges + 1, http.StatusOK}, {5000, http.StatusOK}} {
		req := httptest.NewRequest(http.MethodGet, "/index.json", nil)
		req.Header.Set("Range", manyRanges(tc.ranges))
		w := httptest.NewRecorder()
		serveBytes(echo.New().NewContext(req, w), cache.of(d, false, body), d.LastModified, body, false)
		if w.Code != tc.status || (tc.status == http.StatusOK && !bytes.Equal(w.Body.Bytes(), raw)) {
			t.Errorf("%d ranges: %d with %d bytes; want %d (200: the whole %d bytes)", tc.ranges, w.Code, w.Body.Len(), tc.status, len(raw))
		}
	}
}

// BenchmarkServeBytesRanges: the cost of a Range request for a 5 MiB document by the number
// of one-byte ranges it asks for (0: a plain GET), up to a header of about 60 KiB.
func BenchmarkServeBytesRanges(b *testing.B) {
	body := index.NewBody(splitParts(bytes.Repeat([]byte(`{"plugins":[]}`), 5<<20/14), "5000")) // entries of about 1 KiB
	d := &ingest.Document{Body: body, ETag: `"abc"`, LastModified: time.Unix(1e9, 0)}
	var cache docHeaderCache
	e := echo.New()
	for _, n := range []int{0, 1, maxRanges, maxRanges + 1, 6000} {
		b.Run("ranges="+strconv.Itoa(n), func(b *testing.B) {
			req, rh := httptest.NewRequest(http.MethodGet, "/index.json", nil), manyRanges(n)
			for b.Loop() {
				if n > 0 {
					req.Header.Set("Range", rh)
				}
				w := &discardWriter{h: http.Header{}}
				serveBytes(e.NewContext(req, w), cache.of(d, false, body), d.LastModified, body, false)
			}
		})
	}
}

// discardWriter is a ResponseWriter that drops what it is sent.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }

// TestServeBytesConditionalSendsOnce: through a real http.Server on heldListener, a
// document of many parts answered by http.ServeContent (a host's stale If-None-Match, a
// suffix range) leaves with its head in one writev as a plain GET does, not through
// net/http's 32 KiB copy; a range cut short still arrives right.
func TestServeBytesConditionalSendsOnce(t *testing.T) {
	raw := bytes.Repeat([]byte(`{"plugins":[]}`), 40000) // 560 KB: 18 copies of 32 KiB
	body := index.NewBody(splitParts(raw, "3000"))
	d := &ingest.Document{Body: body, ETag: `"abc"`, LastModified: time.Unix(1e9, 0)}
	var cache docHeaderCache
	sends := make(chan int, 1)
	e := echo.New()
	srv := &http.Server{ConnContext: withConn, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hc, _ := r.Context().Value(connKey{}).(*heldConn)
		if hc == nil {
			t.Error("no *heldConn in the request's context")
			return
		}
		before := hc.sends
		w.Header().Set("Etag", `"abc"`)
		serveBytes(e.NewContext(r, w), cache.of(d, false, body), d.LastModified, body, false)
		sends <- hc.sends - before
	})}
	addr := serveOnHeld(t, srv)
	for _, tc := range []struct {
		name, field, value string
		status             int
		want               []byte
		sends              int // during the handler; -1: any
	}{
		{"plain", "", "", http.StatusOK, raw, 1},
		{"stale if-none-match", "If-None-Match", `"old"`, http.StatusOK, raw, 1},
		{"suffix range", "Range", "bytes=-100000", http.StatusPartialContent, raw[len(raw)-100000:], 1},
		{"range to the end", "Range", "bytes=1000-", http.StatusPartialContent, raw[1000:], 1},
		{"range cut short", "Range", "bytes=1000-99999", http.StatusPartialContent, raw[1000:100000], -1},
		{"not modified", "If-None-Match", `"abc"`, http.StatusNotModified, nil, 0},
	} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/index.json", nil)
		if tc.field != "" {
			req.Header.Set(tc.field, tc.value)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.status || !bytes.Equal(got, tc.want) {
			t.Errorf("%s: %d with %d bytes; want %d with %d", tc.name, res.StatusCode, len(got), tc.status, len(tc.want))
		}
		if n := <-sends; tc.sends >= 0 && n != tc.sends {
			t.Errorf("%s: %d writes during the handler, want %d", tc.name, n, tc.sends)
		}
	}
}

// BenchmarkServeBytesStaleETag: a host's poll with a stale If-None-Match for a document of
// entries of about 1 KiB (http.ServeContent's 200), through a real server on heldListener,
// by document size.
func BenchmarkServeBytesStaleETag(b *testing.B) {
	for _, size := range []int{64 << 10, 1 << 20, 5 << 20} {
		b.Run(strconv.Itoa(size>>10)+"KiB", func(b *testing.B) {
			raw := bytes.Repeat([]byte(`{"plugins":[]}`), size/14)
			body := index.NewBody(splitParts(raw, strconv.Itoa(max(size>>10, 1))))
			d := &ingest.Document{Body: body, ETag: `"abc"`, LastModified: time.Unix(1e9, 0)}
			var cache docHeaderCache
			e := echo.New()
			srv := &http.Server{ConnContext: withConn, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Etag", `"abc"`)
				serveBytes(e.NewContext(r, w), cache.of(d, false, body), d.LastModified, body, false)
			})}
			addr := serveOnHeld(b, srv)
			req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/index.json", nil)
			req.Header.Set("If-None-Match", `"old"`)
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		})
	}
}

// BenchmarkAcceptsGzipHostile: the cost of weighing an Accept-Encoding field of n elements
// with parameters, up to what the server's 64 KiB header limit lets through (every document
// request weighs it).
func BenchmarkAcceptsGzipHostile(b *testing.B) {
	for _, n := range []int{10, 1000, 3600} { // 3,600 of these fill the server's 64 KiB header limit
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			h := http.Header{"Accept-Encoding": {strings.Repeat("X-Gzip;A=1;Q=0.5, ", n)}}
			b.SetBytes(int64(len(h["Accept-Encoding"][0])))
			for b.Loop() {
				if !acceptsGzip(h) {
					b.Fatal("x-gzip;q=0.5 not accepted")
				}
			}
		})
	}
}

// TestAcceptsGzipNames: coding names are compared without regard to case, and weighed
// however many elements come before them.
func TestAcceptsGzipNames(t *testing.T) {
	for _, tc := range []struct {
		field string
		want  bool
	}{
		{"gzip", true},
		{"GZip", true},
		{"X-GZIP;Q=0.5", true},
		{"IDENTITY;q=1, gzip;q=0.5", false},
		{"*;q=0.5", true},
		{strings.Repeat("br, ", 3000) + "Gzip", true},
		{strings.Repeat("br, ", 3000) + "gzip;q=0", false},
	} {
		if got := acceptsGzip(http.Header{"Accept-Encoding": {tc.field}}); got != tc.want {
			t.Errorf("Accept-Encoding %.60q: gzip %v, want %v", tc.field, got, tc.want)
		}
	}
}

package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// semanticsTarget is one thing the registry serves, with what http.ServeContent is given
// to serve the same bytes: the reference the registry's answers must equal.
type semanticsTarget struct {
	name, path string
	header     http.Header // set on every request (Accept-Encoding for the gzip variant)
	ref        http.Header // set by the reference before ServeContent
	modtime    time.Time
	body       []byte
}

// semanticsCases are request header combinations, with {etag}, {date}, {before} and
// {after} standing for the target's validators.
var semanticsCases = []struct {
	name   string
	method string
	header []string
}{
	{"plain", http.MethodGet, nil},
	{"HEAD", http.MethodHead, nil},
	{"If-None-Match match", http.MethodGet, []string{"If-None-Match", "{etag}"}},
	{"If-None-Match weak match", http.MethodGet, []string{"If-None-Match", "W/{etag}"}},
	{"If-None-Match list", http.MethodGet, []string{"If-None-Match", `"other", {etag}`}},
	{"If-None-Match list no spaces", http.MethodGet, []string{"If-None-Match", `"a","b",{etag}`}},
	{"If-None-Match star", http.MethodGet, []string{"If-None-Match", "*"}},
	{"If-None-Match other", http.MethodGet, []string{"If-None-Match", `"other"`}},
	{"If-None-Match other beats If-Modified-Since", http.MethodGet, []string{"If-None-Match", `"other"`, "If-Modified-Since", "{after}"}},
	{"HEAD If-None-Match", http.MethodHead, []string{"If-None-Match", "{etag}"}},
	{"If-Modified-Since same", http.MethodGet, []string{"If-Modified-Since", "{date}"}},
	{"If-Modified-Since later", http.MethodGet, []string{"If-Modified-Since", "{after}"}},
	{"If-Modified-Since earlier", http.MethodGet, []string{"If-Modified-Since", "{before}"}},
	{"If-Modified-Since malformed", http.MethodGet, []string{"If-Modified-Since", "yesterday"}},
	{"range", http.MethodGet, []string{"Range", "bytes=0-9"}},
	{"suffix range", http.MethodGet, []string{"Range", "bytes=-5"}},
	{"open range", http.MethodGet, []string{"Range", "bytes=5-"}},
	{"multiple ranges", http.MethodGet, []string{"Range", "bytes=0-1,4-5"}},
	{"unsatisfiable range", http.MethodGet, []string{"Range", "bytes=99999999-"}},
	{"malformed range", http.MethodGet, []string{"Range", "bytes=x-y"}},
	{"non-bytes range", http.MethodGet, []string{"Range", "lines=1-2"}},
	{"HEAD range", http.MethodHead, []string{"Range", "bytes=0-9"}},
	{"If-Range etag", http.MethodGet, []string{"Range", "bytes=0-9", "If-Range", "{etag}"}},
	{"If-Range weak etag", http.MethodGet, []string{"Range", "bytes=0-9", "If-Range", "W/{etag}"}},
	{"If-Range other etag", http.MethodGet, []string{"Range", "bytes=0-9", "If-Range", `"other"`}},
	{"If-Range date", http.MethodGet, []string{"Range", "bytes=0-9", "If-Range", "{date}"}},
	{"If-Range earlier date", http.MethodGet, []string{"Range", "bytes=0-9", "If-Range", "{before}"}},
	{"If-Match match", http.MethodGet, []string{"If-Match", "{etag}"}},
	{"If-Match other", http.MethodGet, []string{"If-Match", `"other"`}},
	{"If-Unmodified-Since earlier", http.MethodGet, []string{"If-Unmodified-Since", "{before}"}},
	{"If-Unmodified-Since later", http.MethodGet, []string{"If-Unmodified-Since", "{after}"}},
}

// semanticsHeaders are the response headers a cache or a client acts on.
var semanticsHeaders = []string{"Content-Type", "Content-Length", "Content-Range", "Content-Encoding", "ETag", "Last-Modified", "Accept-Ranges"}

// TestHTTPSemanticsEqualServeContent sends every request header combination to the
// registry and to http.ServeContent serving the same bytes with the same validators, for a
// package, an icon and both representations of index.json, and compares the answers.
func TestHTTPSemanticsEqualServeContent(t *testing.T) {
	e := newEnv(t, "")
	iconPath, _ := e.publishIcon("acme-hello", "icon.svg", []byte(svgIcon))
	data := pkg(t, "acme-other", "1.0.0", "Says hello")
	r := e.publish(adminToken, "acme-other-1.0.0.tar.gz", data)
	var pub published
	r.json(t, &pub)
	pkgPath := strings.TrimPrefix(pub.PackageURL, e.srv.URL)
	pkgModified, err := http.ParseTime(e.get(pkgPath).Header.Get("Last-Modified"))
	if err != nil {
		t.Fatalf("package Last-Modified: %v", err)
	}
	doc := e.svc.Documents().Kandev
	targets := []semanticsTarget{
		{name: "package", path: pkgPath, modtime: pkgModified, body: data,
			ref: http.Header{"Content-Type": {"application/gzip"}, "Etag": {`"` + pub.SHA256 + `"`}}},
		{name: "icon", path: iconPath, body: []byte(svgIcon),
			ref: http.Header{"Content-Type": {"image/svg+xml"}, "Etag": {`"` + strings.TrimSuffix(strings.TrimPrefix(iconPath, "/icons/"), ".svg") + `"`}}},
		{name: "index.json", path: "/index.json", modtime: doc.LastModified, body: doc.Body.Bytes(),
			ref: http.Header{"Content-Type": {"application/json"}, "Etag": {doc.ETag}}},
		{name: "index.json gzip", path: "/index.json", modtime: doc.LastModified, body: doc.Gzip(),
			header: http.Header{"Accept-Encoding": {"gzip"}},
			ref:    http.Header{"Content-Type": {"application/json"}, "Etag": {strings.TrimSuffix(doc.ETag, `"`) + `-gzip"`}, "Content-Encoding": {"gzip"}}},
	}
	for _, tg := range targets {
		ref := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for k, v := range tg.ref {
				w.Header()[k] = v
			}
			// One deliberate difference: the registry ignores a range unit it does not
			// know (RFC 9110 §14.2), where ServeContent answers 416.
			if h := r.Header.Get("Range"); h != "" && !strings.HasPrefix(h, "bytes=") {
				r.Header.Del("Range")
			}
			http.ServeContent(w, r, "", tg.modtime, bytes.NewReader(tg.body))
		}))
		for _, tc := range semanticsCases {
			t.Run(tg.name+"/"+tc.name, func(t *testing.T) {
				want := e.semanticsDo(ref.URL, tg, tc.method, tc.header)
				got := e.semanticsDo(e.srv.URL, tg, tc.method, tc.header)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("registry vs http.ServeContent (-want +got):\n%s", diff)
				}
			})
		}
		ref.Close()
	}
}

// rawTransport sends requests as written: net/http's default transport would ask for gzip
// itself and decode the answer out of sight.
var rawTransport = &http.Transport{DisableCompression: true}

func (e *env) doRaw(req *http.Request) response {
	e.t.Helper()
	res, err := rawTransport.RoundTrip(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{Status: res.StatusCode, Header: res.Header, Body: body}
}

// semanticsAnswer is what is compared: status, the headers that matter, the body.
type semanticsAnswer struct {
	Status int
	Header map[string]string
	Body   string
}

func (e *env) semanticsDo(base string, tg semanticsTarget, method string, pairs []string) semanticsAnswer {
	e.t.Helper()
	req, err := http.NewRequest(method, base+tg.path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range tg.header {
		req.Header[k] = v
	}
	date := tg.modtime.UTC()
	etag := tg.ref.Get("Etag")
	repl := strings.NewReplacer("{etag}", etag, "{date}", date.Format(http.TimeFormat),
		"{before}", date.Add(-time.Hour).Format(http.TimeFormat), "{after}", date.Add(time.Hour).Format(http.TimeFormat))
	for i := 0; i+1 < len(pairs); i += 2 {
		req.Header.Set(pairs[i], repl.Replace(pairs[i+1]))
	}
	res := e.doRaw(req)
	ans := semanticsAnswer{Status: res.Status, Header: map[string]string{}, Body: string(res.Body)}
	for _, h := range semanticsHeaders {
		if v := res.Header.Get(h); v != "" {
			ans.Header[h] = v
		}
	}
	// A pre-encoded body has a known length: the registry sends it (the reference, which
	// cannot know whether the encoding happens on the fly, leaves it to net/http).
	if tg.ref.Get("Content-Encoding") != "" && ans.Status == http.StatusOK {
		if cl := ans.Header["Content-Length"]; cl != "" && cl != strconv.Itoa(len(tg.body)) {
			e.t.Errorf("gzip Content-Length %s, body %d bytes", cl, len(tg.body))
		}
		delete(ans.Header, "Content-Length")
	}
	if _, params, err := mime.ParseMediaType(ans.Header["Content-Type"]); err == nil && params["boundary"] != "" {
		b := params["boundary"]
		ans.Header["Content-Type"] = strings.ReplaceAll(ans.Header["Content-Type"], b, "BOUNDARY")
		ans.Body = strings.ReplaceAll(ans.Body, b, "BOUNDARY")
	}
	return ans
}

// TestGzipContentLength checks that the gzip bytes of index.json go out with their length,
// for GET and HEAD, not chunked.
func TestGzipContentLength(t *testing.T) {
	e := newEnv(t, "")
	gz := e.svc.Documents().Kandev.Gzip()
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		req, _ := http.NewRequest(method, e.srv.URL+"/index.json", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		r := e.doRaw(req)
		if r.Header.Get("Content-Encoding") != "gzip" || r.Header.Get("Content-Length") != strconv.Itoa(len(gz)) {
			t.Errorf("%s: Content-Encoding %q, Content-Length %q, want %d", method, r.Header.Get("Content-Encoding"), r.Header.Get("Content-Length"), len(gz))
		}
	}
}

func TestAcceptEncodingQValues(t *testing.T) {
	e := newEnv(t, "")
	plain := e.svc.Documents().Kandev.Body.Bytes()
	tests := []struct {
		accept []string // one header field per element; nil sends none
		gzip   bool
	}{
		{nil, false},
		{[]string{""}, false},
		{[]string{"gzip"}, true},
		{[]string{"GZIP"}, true},
		{[]string{"x-gzip"}, true},
		{[]string{"gzip;q=0.8"}, true},
		{[]string{"gzip; q=0.8"}, true},
		{[]string{"gzip;Q=0.001"}, true},
		{[]string{"gzip;q=0"}, false},
		{[]string{"gzip;q=0.000"}, false},
		{[]string{"gzip;q=0, *"}, false},
		{[]string{"br, gzip;q=0"}, false},
		{[]string{"deflate, gzip;q=1.0, *;q=0.5"}, true},
		{[]string{"*"}, true},
		{[]string{"*;q=0.5"}, true},
		{[]string{"*;q=0"}, false},
		{[]string{"identity"}, false},
		{[]string{"gzip;q=0.5, identity"}, false},
		{[]string{"gzip;q=0.5, identity;q=0.5"}, true},
		{[]string{"gzip, identity;q=0"}, true},
		{[]string{"identity;q=0.1, *;q=0.9"}, true},
		{[]string{"br"}, false},
		{[]string{"br", "gzip"}, true},
		{[]string{"gzip;q=1.5"}, false},
		{[]string{"gzip;q=2"}, false},
		{[]string{"gzip;q=abc"}, false},
		{[]string{"gzip;q=0.8x"}, false},
		{[]string{"gzips"}, false},
		{[]string{"notgzip, br"}, false},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.accept, " | "), func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/index.json", nil)
			req.Header["Accept-Encoding"] = tt.accept
			r := e.doRaw(req)
			if got := r.Header.Get("Content-Encoding") == "gzip"; got != tt.gzip {
				t.Fatalf("Accept-Encoding %q: gzip = %v, want %v", tt.accept, got, tt.gzip)
			}
			if !strings.Contains(r.Header.Get("Vary"), "Accept-Encoding") {
				t.Errorf("no Vary: Accept-Encoding: %v", r.Header)
			}
			body := r.Body
			if tt.gzip {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(body, plain) {
				t.Errorf("body is not the document")
			}
		})
	}
}

// TestOnlyWholeBodiesCountAsDownloads: a 304, a range, a HEAD or a failed precondition is
// not a download; a full GET is.
func TestOnlyWholeBodiesCountAsDownloads(t *testing.T) {
	e := newEnv(t, "")
	r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello"))
	var pub published
	r.json(t, &pub)
	path := strings.TrimPrefix(pub.PackageURL, e.srv.URL)
	etag := `"` + pub.SHA256 + `"`
	for _, h := range [][]string{{"If-None-Match", etag}, {"Range", "bytes=0-9"}, {"If-Match", `"other"`}, {"Range", "bytes=999999-"}} {
		if r := e.get(path, h...); r.Status == http.StatusOK {
			t.Fatalf("%v answered 200", h)
		}
	}
	req, _ := http.NewRequest(http.MethodHead, e.srv.URL+path, nil)
	e.do(req)
	e.get(path)
	ctx := context.Background()
	if err := e.svc.FlushDownloads(ctx); err != nil {
		t.Fatal(err)
	}
	rel, err := e.st.Release(ctx, "acme-hello", "1.0.0")
	if err != nil || rel.Downloads != 1 {
		t.Errorf("downloads = %d, %v; want 1 (only the full GET)", rel.Downloads, err)
	}
}

// TestContentDispositionIsQuoted serves a release stored before versions had a grammar,
// whose version holds a quote: the file name stays one quoted parameter.
func TestContentDispositionIsQuoted(t *testing.T) {
	e := newEnv(t, "")
	data := pkg(t, "acme-hello", "1.0.0", "Says hello")
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", data); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	ctx := context.Background()
	old, err := e.st.Release(ctx, "acme-hello", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.FillManifests(ctx, []*store.Release{old}); err != nil {
		t.Fatal(err)
	}
	hostile := *old
	hostile.Version = `0.9.0";evil="x`
	if _, err := e.st.InsertRelease(ctx, &hostile, store.AuditEntry{Actor: "test", Action: "publish"}); err != nil {
		t.Fatal(err)
	}
	r := e.get("/packages/acme-hello/acme-hello-" + url.PathEscape(hostile.Version) + ".tar.gz")
	if r.Status != http.StatusOK {
		t.Fatalf("download: %d %s", r.Status, r.Body)
	}
	disp, params, err := mime.ParseMediaType(r.Header.Get("Content-Disposition"))
	want := map[string]string{"filename": "acme-hello-" + hostile.Version + ".tar.gz"}
	if err != nil || disp != "attachment" || !cmp.Equal(params, want) {
		t.Errorf("Content-Disposition %q parses as %q %v (%v); want attachment %v", r.Header.Get("Content-Disposition"), disp, params, err, want)
	}
}

package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/server"
)

// fastCase is one request to a document route, sent to the fast path and to the router.
type fastCase struct {
	name, method, path string
	header             []string // name, value pairs
}

// fastCases are requests serveFast answers: both documents, identity and gzip, GET and
// HEAD, a client's request id and an unsafe one, a query string, conditional requests,
// ranges and a browser's Accept.
func fastCases(etag string) []fastCase {
	gz := []string{"Accept-Encoding", "gzip"}
	return []fastCase{
		{"identity", http.MethodGet, "/index.json", nil},
		{"gzip", http.MethodGet, "/index.json", gz},
		{"head gzip", http.MethodHead, "/index.json", gz},
		{"head identity", http.MethodHead, "/index.json", nil},
		{"curupira gzip", http.MethodGet, "/curupira/index.json", gz},
		{"curupira identity", http.MethodGet, "/curupira/index.json", nil},
		{"client request id", http.MethodGet, "/index.json", []string{"Accept-Encoding", "gzip", "X-Request-ID", "req-fast-1"}},
		{"unsafe request id", http.MethodGet, "/index.json", []string{"X-Request-ID", "<script>"}},
		{"query string", http.MethodGet, "/index.json?since=1", gz},
		{"not modified", http.MethodGet, "/index.json", []string{"If-None-Match", etag}},
		{"modified", http.MethodGet, "/index.json", []string{"If-None-Match", `"other"`}},
		{"if-modified-since", http.MethodGet, "/index.json", []string{"If-Modified-Since", "Mon, 02 Jan 2006 15:04:05 GMT"}},
		{"range", http.MethodGet, "/index.json", []string{"Range", "bytes=0-9"}},
		{"gzip range", http.MethodGet, "/index.json", []string{"Accept-Encoding", "gzip", "Range", "bytes=5-"}},
		{"unsatisfiable range", http.MethodGet, "/index.json", []string{"Range", "bytes=999999999-"}},
		{"browser", http.MethodGet, "/index.json", []string{"Accept", "text/html,application/xhtml+xml"}},
	}
}

// TestFastPathMatchesRouter: every request the fast path answers gets the status, header
// fields, body, request line and request metrics it gets through echo's router and
// per-request middleware: the fast path drops nothing that path adds. The index is built
// (200s, 304s, 206s, 416) and not yet built (503).
func TestFastPathMatchesRouter(t *testing.T) {
	for _, built := range []bool{true, false} {
		t.Run(map[bool]string{true: "built", false: "not built"}[built], func(t *testing.T) {
			logs := &syncBuffer{}
			e := newEnvWith(t, server.Config{}, slog.New(slog.NewJSONHandler(logs, nil)), built)
			s := e.srv.Config.Handler.(*server.Server)
			routed := httptest.NewServer(http.HandlerFunc(s.ServeRouted))
			defer routed.Close()
			etag := `"none"`
			if built {
				etag = e.get("/index.json").Header.Get("ETag")
			}
			for _, tc := range fastCases(etag) {
				t.Run(tc.name, func(t *testing.T) {
					fastReq := fastRequest(t, e.srv.URL, tc)
					if !s.TakesFastPath(fastReq) {
						t.Fatalf("%s %s does not take the fast path", tc.method, tc.path)
					}
					route := strings.SplitN(tc.path, "?", 2)[0]
					fast, fastLine, fastGrew := observe(t, e, logs, fastReq, route)
					routedRes, routedLine, routedGrew := observe(t, e, logs, fastRequest(t, routed.URL, tc), route)
					if want := map[bool]int{true: http.StatusOK, false: http.StatusServiceUnavailable}[built]; tc.name == "gzip" && fast.Status != want {
						t.Fatalf("gzip: status %d, want %d", fast.Status, want)
					}
					if diff := cmp.Diff(comparable(routedRes, tc), comparable(fast, tc)); diff != "" {
						t.Errorf("fast path differs from the router (-router +fast):\n%s", diff)
					}
					if diff := cmp.Diff(routedLine, fastLine); diff != "" {
						t.Errorf("request line differs (-router +fast):\n%s", diff)
					}
					if len(fastGrew) != 2 {
						t.Errorf("request metrics that grew on the fast path: %v, want the route's request counter and duration count", fastGrew)
					}
					if diff := cmp.Diff(routedGrew, fastGrew); diff != "" {
						t.Errorf("request metrics grew differently (-router +fast):\n%s", diff)
					}
				})
			}
		})
	}
}

// TestFastPathLeavesOtherRequests: only a GET or HEAD of a document's exact path takes
// the fast path; a trailing slash (redirected by the router), another method, an escaped
// path and every other route go through echo.
func TestFastPathLeavesOtherRequests(t *testing.T) {
	e := newEnvWith(t, server.Config{}, nil, true)
	s := e.srv.Config.Handler.(*server.Server)
	for _, tt := range []struct{ method, target string }{
		{http.MethodGet, "/index.json/"}, {http.MethodPost, "/index.json"}, {http.MethodOptions, "/index.json"},
		{http.MethodGet, "/index%2Ejson"}, {http.MethodGet, "/index/tools.json"}, {http.MethodGet, "/healthz"},
		{http.MethodGet, "/"}, {http.MethodGet, "/kandev/1.0.0/linux-amd64/index.json"},
	} {
		if s.TakesFastPath(httptest.NewRequest(tt.method, tt.target, nil)) {
			t.Errorf("%s %s takes the fast path", tt.method, tt.target)
		}
	}
	if r := e.get("/index.json/"); r.Status != http.StatusMovedPermanently || r.Header.Get("Location") != "/index.json" {
		t.Errorf("GET /index.json/: %d to %q, want the router's 301 to /index.json", r.Status, r.Header.Get("Location"))
	}
}

func fastRequest(t *testing.T, base string, tc fastCase) *http.Request {
	t.Helper()
	req, err := http.NewRequest(tc.method, base+tc.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(tc.header); i += 2 {
		req.Header.Set(tc.header[i], tc.header[i+1])
	}
	return req
}

// observe sends req and returns the response, the request line it logged (without the
// fields that differ between two requests: time, duration, request id) and how much each
// request metric of its route grew.
func observe(t *testing.T, e *env, logs *syncBuffer, req *http.Request, route string) (response, map[string]any, map[string]float64) {
	t.Helper()
	before, logged := routeMetrics(e, route), len(logs.String())
	res := e.do(req)
	grew := map[string]float64{}
	for k, v := range routeMetrics(e, route) {
		if d := v - before[k]; d != 0 {
			grew[k] = d
		}
	}
	line := lastRequestLine(logs.String()[logged:], route)
	if line == nil {
		t.Fatalf("no request line for %s %s", req.Method, route)
	}
	if id, _ := line["request_id"].(string); id == "" || id != res.Header.Get("X-Request-ID") {
		t.Errorf("request line's request_id %q, response's X-Request-ID %q", id, res.Header.Get("X-Request-ID"))
	}
	for _, k := range []string{"time", "duration_ms", "request_id"} {
		if _, ok := line[k]; !ok {
			t.Errorf("request line lacks %s: %v", k, line)
		}
		delete(line, k)
	}
	return res, line, grew
}

// routeMetrics are the request counters and the duration histogram's count of route, by
// sample name and labels.
func routeMetrics(e *env, route string) map[string]float64 {
	out := map[string]float64{}
	for _, l := range e.metricLines("registry_http_requests_total{", "registry_http_request_duration_seconds_count{") {
		name, value, ok := strings.Cut(l, " ")
		if !ok || !strings.Contains(name, `route="`+route+`"`) {
			continue
		}
		var v float64
		_ = json.Unmarshal([]byte(value), &v)
		out[name] = v
	}
	return out
}

// lastRequestLine is the last JSON line of logs with msg "request" for path.
func lastRequestLine(logs, path string) map[string]any {
	var last map[string]any
	sc := bufio.NewScanner(strings.NewReader(logs))
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["msg"] == "request" && m["path"] == path {
			last = m
		}
	}
	return last
}

// comparable is what two answers to the same request share: status, body and every
// header field but Date and a generated X-Request-ID (its presence is kept).
func comparable(r response, tc fastCase) response {
	h := r.Header.Clone()
	delete(h, "Date")
	if id := h.Get("X-Request-Id"); id != "" && !strings.Contains(strings.Join(tc.header, " "), id) {
		h.Set("X-Request-Id", "(generated)")
	}
	return response{Status: r.Status, Header: h, Body: r.Body}
}

// TestDocumentLargestRequest sends /index.json the largest requests a client can: an
// Accept-Encoding and a Range of thousands of elements, near the server's 64 KiB header
// limit. The fast path reads every element (the decisive one comes last) and answers as
// for a short header: the gzip bytes or the identity bytes (ranges summing to more than
// the document are answered with all of it, as http.ServeContent does).
func TestDocumentLargestRequest(t *testing.T) {
	e := newEnvWith(t, server.Config{}, nil, true)
	s := e.srv.Config.Handler.(*server.Server)
	filler := strings.Repeat("BR;q=0.001, X-Unknown;q=1, ", 2000) // 56 KB
	tests := []struct {
		name, accept, rangeHeader string
		status                    int
		encoding, contentType     string
	}{
		{"gzip named last", filler + "x-GZIP;q=0.5, identity;q=0.4", "", http.StatusOK, "gzip", "application/json"},
		{"gzip refused last", filler + "gzip;q=0", "", http.StatusOK, "", "application/json"},
		{"malformed weights", filler + "gzip;q=2, identity;q=0.0001", "", http.StatusOK, "", "application/json"},
		// More bytes in ranges than the document has: the whole document, not 8,001 parts.
		{"thousands of ranges", "", "bytes=" + strings.Repeat("0-0,", 8000) + "1-1", http.StatusOK, "", "application/json"},
	}
	whole := e.get("/index.json")
	if len(whole.Body) >= 8001 {
		t.Fatalf("the document has %d bytes: the ranges case needs fewer than its 8001 ranged bytes", len(whole.Body))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := fastRequest(t, e.srv.URL, fastCase{method: http.MethodGet, path: "/index.json"})
			if tt.accept != "" {
				req.Header.Set("Accept-Encoding", tt.accept)
			}
			if tt.rangeHeader != "" {
				req.Header.Set("Range", tt.rangeHeader)
			}
			if !s.TakesFastPath(req) {
				t.Fatal("the request does not take the fast path")
			}
			r := e.do(req)
			if r.Status != tt.status || r.Header.Get("Content-Encoding") != tt.encoding ||
				!strings.HasPrefix(r.Header.Get("Content-Type"), tt.contentType) {
				t.Fatalf("status %d, Content-Encoding %q, Content-Type %q; want %d, %q, %s",
					r.Status, r.Header.Get("Content-Encoding"), r.Header.Get("Content-Type"), tt.status, tt.encoding, tt.contentType)
			}
			if tt.encoding == "" && !bytes.Equal(r.Body, whole.Body) {
				t.Errorf("body of %d bytes, want the document's %d", len(r.Body), len(whole.Body))
			}
		})
	}
}

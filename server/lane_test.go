package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/server"
)

// laneEnv is a registry served by Server.Serve (lane and net/http behind one listener) and,
// for comparison, the same Server behind a plain net/http server.
type laneEnv struct {
	*env
	srv   *server.Server
	addr  string // Serve's listener
	plain string // net/http alone, same handler
	logs  *syncBuffer
	stop  func() error
}

// startLane serves a registry with one published plugin through Serve.
func startLane(t *testing.T, built bool, cfg server.Config) *laneEnv {
	t.Helper()
	e := newEnvWith(t, server.Config{}, nil, built)
	if built {
		if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkgWith(t, "1.0.0", nil)); r.Status != http.StatusCreated {
			t.Fatalf("publish: %d %s", r.Status, r.Body)
		}
	}
	logs := &syncBuffer{}
	cfg.PublicURL, cfg.AdminSecret, cfg.Metrics = "http://x", adminToken, server.NewMetrics()
	srv := server.New(cfg, e.svc, e.st, slog.New(slog.NewJSONHandler(logs, nil)))
	addr, stop := serveUntil(t, srv)
	plain := httptest.NewServer(srv)
	t.Cleanup(plain.Close)
	le := &laneEnv{env: e, srv: srv, addr: addr, plain: plain.Listener.Addr().String(), logs: logs, stop: stop}
	return le
}

// dial connects to addr for at most 20 s of the test.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	return c
}

// exchange writes raw on a new connection to addr and reads one response per method in
// methods (HEAD responses have no body).
func exchange(t *testing.T, addr, raw string, methods ...string) []response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	return readResponses(t, bufio.NewReader(c), methods...)
}

func readResponses(t *testing.T, br *bufio.Reader, methods ...string) []response {
	t.Helper()
	var out []response
	for _, m := range methods {
		res, err := http.ReadResponse(br, &http.Request{Method: m})
		if err != nil {
			t.Fatalf("response %d of %d: %v", len(out)+1, len(methods), err)
		}
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatalf("response %d body: %v", len(out)+1, err)
		}
		_ = res.Body.Close()
		out = append(out, response{Status: res.StatusCode, Header: res.Header, Body: body})
	}
	return out
}

// head is a request head: the request line, then fields ("Name: value"), CRLF-terminated.
func head(line string, fields ...string) string {
	return line + "\r\n" + strings.Join(append(fields, ""), "\r\n") + "\r\n"
}

// sameAnswer is what two answers to one request share: status, body, every field but Date
// and X-Request-Id (each must be there).
func sameAnswer(t *testing.T, r response) response {
	t.Helper()
	h := r.Header.Clone()
	for _, k := range []string{"Date", "X-Request-Id"} {
		if h.Get(k) == "" {
			t.Errorf("answer without %s: %v", k, r.Header)
		}
		delete(h, k)
	}
	return response{Status: r.Status, Header: h, Body: r.Body}
}

// TestLaneMatchesNetHTTP: every request the lane answers gets the status, fields, body,
// request line and request metrics that net/http's path gives the same request (sent with
// one more field, which sends it to net/http): the index built (200, 304) and not (503).
func TestLaneMatchesNetHTTP(t *testing.T) {
	for _, built := range []bool{true, false} {
		t.Run(map[bool]string{true: "built", false: "not built"}[built], func(t *testing.T) {
			le := startLane(t, built, server.Config{})
			etag := `"none"`
			counts := map[string]float64{} // requests sent, by method and path
			if built {
				counts["GET /index.json"]++
				r := exchange(t, le.addr, head("GET /index.json HTTP/1.1", "Host: x", "Accept-Encoding: gzip"), http.MethodGet)[0]
				if etag = r.Header.Get("ETag"); etag == "" || r.Header.Get("Content-Encoding") != "gzip" {
					t.Fatalf("gzip index: ETag %q, Content-Encoding %q", etag, r.Header.Get("Content-Encoding"))
				}
			}
			for _, tc := range []struct {
				name, method, path string
				fields             []string
			}{
				{"identity", "GET", "/index.json", []string{"Host: x"}},
				{"gzip", "GET", "/index.json", []string{"Host: x", "User-Agent: kandev/1.4", "Accept: application/json", "Accept-Encoding: gzip", "Connection: keep-alive"}},
				{"head gzip", "HEAD", "/index.json", []string{"host: x:8080", "accept-encoding: gzip"}},
				{"head identity", "HEAD", "/index.json", []string{"Host: x"}},
				{"curupira", "GET", "/curupira/index.json", []string{"Host: x", "Accept-Encoding: gzip;q=0.5, identity"}},
				{"not modified", "GET", "/index.json", []string{"Host: x", "Accept-Encoding: gzip", "If-None-Match: " + etag}},
				{"modified", "GET", "/index.json", []string{"Host: x", "If-None-Match: \"other\""}},
				{"if-modified-since", "GET", "/index.json", []string{"Host: [::1]:80", "If-Modified-Since: Mon, 02 Jan 2006 15:04:05 GMT"}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					line := tc.method + " " + tc.path + " HTTP/1.1"
					before := le.srv.LaneServed()
					lane := exchange(t, le.addr, head(line, tc.fields...), tc.method)[0]
					if got := le.srv.LaneServed() - before; got != 1 {
						t.Fatalf("the lane answered %d requests, want 1", got)
					}
					counts[tc.method+" "+tc.path]++
					le.waitRequests(t, tc.path, tc.method, counts[tc.method+" "+tc.path])
					viaNet := exchange(t, le.addr, head(line, append(tc.fields, "X-Via: net/http")...), tc.method)[0]
					if got := le.srv.LaneServed() - before; got != 1 {
						t.Fatalf("a request with a field the lane does not read was answered by the lane")
					}
					counts[tc.method+" "+tc.path]++
					le.waitRequests(t, tc.path, tc.method, counts[tc.method+" "+tc.path])
					if diff := cmp.Diff(sameAnswer(t, viaNet), sameAnswer(t, lane)); diff != "" {
						t.Errorf("lane answer differs from net/http's (-net/http +lane):\n%s", diff)
					}
					laneLine := le.requestLine(t, lane.Header.Get("X-Request-Id"))
					netLine := le.requestLine(t, viaNet.Header.Get("X-Request-Id"))
					for _, l := range []map[string]any{laneLine, netLine} {
						delete(l, "time")
						delete(l, "duration_ms")
						delete(l, "request_id")
					}
					if diff := cmp.Diff(netLine, laneLine); diff != "" {
						t.Errorf("lane request line differs (-net/http +lane):\n%s", diff)
					}
				})
			}
		})
	}
}

// requestLine waits for the request line of the request id (Serve writes the lines in
// batches, a fraction of a second after their requests).
func (le *laneEnv) requestLine(t *testing.T, id string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		sc := bufio.NewScanner(strings.NewReader(le.logs.String()))
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil && m["msg"] == "request" && m["request_id"] == id {
				return m
			}
		}
	}
	t.Fatalf("no request line with request_id %q", id)
	return nil
}

// waitRequests waits until le's request counters of route and method sum to want (each
// is counted once its answer is sent), and fails if they pass it.
func (le *laneEnv) waitRequests(t *testing.T, route, method string, want float64) {
	t.Helper()
	got := 0.0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if got = laneRequests(t, le, route, method); got >= want {
			break
		}
	}
	if got != want {
		t.Fatalf("%s %s counted %v times, want %v", method, route, got, want)
	}
}

// laneRequests is the sum of le's request counters of route and method (/metrics, read
// through net/http).
func laneRequests(t *testing.T, le *laneEnv, route, method string) float64 {
	t.Helper()
	r := exchange(t, le.addr, head("GET /metrics HTTP/1.1", "Host: x", "X-Via: net/http"), http.MethodGet)[0]
	sum := 0.0
	for _, l := range strings.Split(string(r.Body), "\n") {
		name, v, ok := strings.Cut(l, " ")
		if !ok || !strings.HasPrefix(name, "registry_http_requests_total{") ||
			!strings.Contains(name, `route="`+route+`"`) || !strings.Contains(name, `method="`+method+`"`) {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		sum += f
	}
	return sum
}

// TestLaneHandsOverWhatItDoesNotRead: a request the lane does not answer (a method, a
// version, a target or a field it does not take, or a head that is malformed, ambiguous
// or too long) goes to net/http with every byte, and gets exactly net/http's answer to the
// same bytes (the Server behind net/http alone).
func TestLaneHandsOverWhatItDoesNotRead(t *testing.T) {
	le := startLane(t, true, server.Config{})
	long := "User-Agent: " + strings.Repeat("a", 5000)
	for _, tc := range []struct{ name, raw string }{
		{"post", head("POST /index.json HTTP/1.1", "Host: x", "Content-Length: 0")},
		{"lower-case method", head("get /index.json HTTP/1.1", "Host: x")},
		{"http/1.0", head("GET /index.json HTTP/1.0", "Host: x")},
		{"query", head("GET /index.json?x=1 HTTP/1.1", "Host: x")},
		{"escaped path", head("GET /index%2Ejson HTTP/1.1", "Host: x")},
		{"absolute form", head("GET http://x/index.json HTTP/1.1", "Host: x")},
		{"two spaces", head("GET  /index.json HTTP/1.1", "Host: x")},
		{"other page", head("GET /healthz HTTP/1.1", "Host: x")},
		{"no host", head("GET /index.json HTTP/1.1", "Accept: */*")},
		{"two hosts", head("GET /index.json HTTP/1.1", "Host: x", "Host: y")},
		{"bad host", head("GET /index.json HTTP/1.1", "Host: x y")},
		{"empty host", head("GET /index.json HTTP/1.1", "Host:")},
		{"two accept-encodings", head("GET /index.json HTTP/1.1", "Host: x", "Accept-Encoding: gzip", "Accept-Encoding: identity")},
		{"request id", head("GET /index.json HTTP/1.1", "Host: x", "X-Request-ID: abc")},
		{"range", head("GET /index.json HTTP/1.1", "Host: x", "Range: bytes=0-9")},
		{"connection close", head("GET /index.json HTTP/1.1", "Host: x", "Connection: close")},
		{"space before colon", head("GET /index.json HTTP/1.1", "Host : x")},
		{"obs-fold", head("GET /index.json HTTP/1.1", "Host: x", "Accept: a", " b")},
		{"control byte", head("GET /index.json HTTP/1.1", "Host: x", "User-Agent: a\x01b")},
		{"delete byte", head("GET /index.json HTTP/1.1", "Host: x", "User-Agent: a\x7fb")},
		{"non-ascii", head("GET /index.json HTTP/1.1", "Host: x", "User-Agent: caf\xc3\xa9")},
		{"bare lf", "GET /index.json HTTP/1.1\nHost: x\n\n"},
		{"lf inside", "GET /index.json HTTP/1.1\r\nHost: x\nAccept: */*\r\n\r\n"},
		{"field without colon", head("GET /index.json HTTP/1.1", "Host: x", "Accept")},
		{"too long", head("GET /index.json HTTP/1.1", "Host: x", long)},
		{"chunked body", head("GET /index.json HTTP/1.1", "Host: x", "Transfer-Encoding: chunked") + "0\r\n\r\n"},
		{"content-length body", head("GET /index.json HTTP/1.1", "Host: x", "Content-Length: 5") + "hello"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := le.srv.LaneServed()
			got := exchange(t, le.addr, tc.raw, http.MethodGet)[0]
			if n := le.srv.LaneServed() - before; n != 0 {
				t.Fatalf("the lane answered %q", tc.raw)
			}
			want := exchange(t, le.plain, tc.raw, http.MethodGet)[0]
			for _, r := range []*response{&got, &want} {
				r.Header = r.Header.Clone()
				delete(r.Header, "Date")
				if r.Header.Get("X-Request-Id") != "" {
					r.Header.Set("X-Request-Id", "(set)")
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("answer differs from net/http's alone (-net/http +served):\n%s", diff)
			}
		})
	}
}

// TestLanePipelinedRequestsKeepTheirOrder: requests sent back to back on one connection
// get their answers in order, whole, whether the lane answers them or net/http (from the
// first request the lane does not read, net/http reads the rest, the lane's bytes
// included); a body is never read as a request.
func TestLanePipelinedRequestsKeepTheirOrder(t *testing.T) {
	le := startLane(t, true, server.Config{})
	plain := exchange(t, le.addr, head("GET /index.json HTTP/1.1", "Host: x"), http.MethodGet)[0].Body
	gz := exchange(t, le.addr, head("GET /index.json HTTP/1.1", "Host: x", "Accept-Encoding: gzip"), http.MethodGet)[0].Body
	before := le.srv.LaneServed()
	smuggled := head("GET /healthz HTTP/1.1", "Host: y") // a body: never a request
	raw := head("GET /index.json HTTP/1.1", "Host: x") +
		head("HEAD /index.json HTTP/1.1", "Host: x") +
		head("GET /index.json HTTP/1.1", "Host: x", "Accept-Encoding: gzip") +
		head("GET /healthz HTTP/1.1", "Host: x") + // to net/http, and everything after it
		head("GET /index.json HTTP/1.1", "Host: x") +
		head("GET /index.json HTTP/1.1", "Host: x", "Content-Length: "+strconv.Itoa(len(smuggled))) + smuggled +
		head("GET /index.json HTTP/1.1", "Host: x", "Accept-Encoding: gzip")
	got := exchange(t, le.addr, raw, "GET", "HEAD", "GET", "GET", "GET", "GET", "GET")
	if n := le.srv.LaneServed() - before; n != 3 {
		t.Errorf("the lane answered %d of the requests, want the 3 before /healthz", n)
	}
	want := [][]byte{plain, nil, gz, nil, plain, plain, gz}
	for i, r := range got {
		if r.Status != http.StatusOK {
			t.Errorf("answer %d: status %d", i+1, r.Status)
		}
		if i == 3 {
			if !strings.Contains(string(r.Body), "ok") {
				t.Errorf("answer 4 is not /healthz's: %q", r.Body)
			}
			continue
		}
		if string(r.Body) != string(want[i]) {
			t.Errorf("answer %d: %d bytes, want %d", i+1, len(r.Body), len(want[i]))
		}
	}
}

// TestLaneTimesOutSlowHeads: a new connection that sends nothing, or starts a head and
// does not end it, within the header timeout is closed (Serve's idle timeout, two
// minutes, is for the time between requests; the test waits 20 s at most).
func TestLaneTimesOutSlowHeads(t *testing.T) {
	le := startLane(t, true, server.Config{ReadHeaderTimeout: 300 * time.Millisecond})
	for _, sent := range []string{"", "GET /index.json HTTP/1.1\r\nHo"} {
		c := dial(t, le.addr)
		if _, err := io.WriteString(c, sent); err != nil {
			t.Fatal(err)
		}
		if n, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("after %q: read %d bytes, %v (want the connection closed by the server)", sent, n, err)
		}
	}
}

// TestLaneKeepsIdleConnections: a connection whose head came in two parts, then idle for
// longer than the header timeout, still serves its next request: the header timeout runs
// from a head's first byte, the idle timeout between requests.
func TestLaneKeepsIdleConnections(t *testing.T) {
	le := startLane(t, true, server.Config{ReadHeaderTimeout: 300 * time.Millisecond})
	c := dial(t, le.addr)
	br := bufio.NewReader(c)
	before := le.srv.LaneServed()
	req := head("GET /index.json HTTP/1.1", "Host: x")
	for _, part := range []string{req[:10], req[10:]} {
		if _, err := io.WriteString(c, part); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	readResponses(t, br, http.MethodGet)
	time.Sleep(600 * time.Millisecond) // twice the header timeout, idle
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	readResponses(t, br, http.MethodGet)
	if n := le.srv.LaneServed() - before; n != 2 {
		t.Errorf("the lane answered %d requests, want 2", n)
	}
}

// TestLaneClosesIdleConnectionsOnShutdown: at shutdown the lane's idle keep-alive
// connections are closed and Serve returns; a request in the middle of its head is not
// answered after it.
func TestLaneClosesIdleConnectionsOnShutdown(t *testing.T) {
	le := startLane(t, true, server.Config{})
	c := dial(t, le.addr)
	br := bufio.NewReader(c)
	before := le.srv.LaneServed()
	if _, err := io.WriteString(c, head("GET /index.json HTTP/1.1", "Host: x")); err != nil {
		t.Fatal(err)
	}
	readResponses(t, br, http.MethodGet)
	if le.srv.LaneServed() == before {
		t.Fatal("the lane did not answer")
	}
	if err := le.stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := br.ReadByte(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("idle lane connection after shutdown: %v, want it closed", err)
	}
}

// TestServeWaitsForLaneAnswers: Serve returns only once the lane's answers in flight are
// sent and logged (every request has its line when Serve returns).
func TestServeWaitsForLaneAnswers(t *testing.T) {
	e := newEnvWith(t, server.Config{}, nil, true)
	logs := &syncBuffer{}
	srv := server.New(server.Config{PublicURL: "http://x", AdminSecret: adminToken}, e.svc, e.st, slog.New(slog.NewJSONHandler(logs, nil)))
	entered, release := make(chan struct{}), make(chan struct{})
	srv.SetLaneHook(func() { close(entered); <-release })
	addr, stop := serveUntil(t, srv)
	answered := make(chan error, 1)
	go func() { // no t.Fatal off the test's goroutine: the error is reported below
		c, err := net.Dial("tcp", addr)
		if err != nil {
			answered <- err
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, head("GET /index.json HTTP/1.1", "Host: x")); err != nil {
			answered <- err
			return
		}
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil {
			_, err = io.Copy(io.Discard, res.Body)
			if err == nil && res.StatusCode != http.StatusOK {
				err = fmt.Errorf("status %d", res.StatusCode)
			}
		}
		answered <- err
	}()
	<-entered
	go func() { time.Sleep(200 * time.Millisecond); close(release) }()
	if err := stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if !strings.Contains(logs.String(), `"path":"/index.json"`) {
		t.Errorf("Serve returned before the lane's answer in flight was logged:\n%s", logs.String())
	}
	if err := <-answered; err != nil {
		t.Errorf("the answer in flight at shutdown: %v", err)
	}
}

// TestServeStopsAcceptingWhenItReturns: once Serve has returned, even when its context had
// ended before it started, nothing is accepted on its listener any more.
func TestServeStopsAcceptingWhenItReturns(t *testing.T) {
	e := newEnvWith(t, server.Config{}, nil, true)
	srv := server.New(server.Config{PublicURL: "http://x", AdminSecret: adminToken}, e.svc, e.st, slog.New(slog.DiscardHandler))
	for range 20 { // the start and the shutdown race: each round is one draw
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := srv.Serve(ctx, ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Fatalf("Serve: %v", err)
		}
		if c, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second); err == nil {
			_ = c.Close()
			t.Fatal("a connection was accepted after Serve returned")
		}
	}
}

package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pluginyard/registry/server"
)

// gatedWriter is a log sink whose writes wait until open is closed: a log destination
// that has stopped reading (a full pipe).
type gatedWriter struct {
	open chan struct{}
	mu   sync.Mutex
	buf  bytes.Buffer
}

func (w *gatedWriter) Write(p []byte) (int, error) {
	<-w.open
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// requestLine is the request log line's fields.
type requestLine struct {
	Msg        string `json:"msg"`
	Method     string `json:"method"`
	Path       string `json:"path"`
	Route      string `json:"route"`
	Status     int    `json:"status"`
	Bytes      int64  `json:"bytes"`
	DurationMS *int64 `json:"duration_ms"`
	RequestID  string `json:"request_id"`
	Remote     string `json:"remote"`
}

// TestServeLogsRequestsWithoutWaitingOnTheLog: while Serve runs, a request is answered
// without waiting for its log line to be written (the lines are written in batches), and
// when Serve returns every request has its line, with all its fields.
func TestServeLogsRequestsWithoutWaitingOnTheLog(t *testing.T) {
	e := newEnvWith(t, server.Config{}, nil, true)
	sink := &gatedWriter{open: make(chan struct{})}
	srv := server.New(server.Config{PublicURL: "http://x", AdminSecret: adminToken}, e.svc, e.st, slog.New(slog.NewJSONHandler(sink, nil)))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()

	// 10 s: a liveness bound (a request that waited on the closed log would never end).
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableCompression: true}}
	var want []requestLine
	for _, r := range []struct {
		path, route string
		status      int
	}{{"/index.json", "/index.json", 200}, {"/healthz", "/healthz", 200}, {"/no/such/page", "/*", 404}} {
		res, err := c.Get("http://" + ln.Addr().String() + r.path)
		if err != nil {
			t.Fatalf("GET %s while the log is not read: %v", r.path, err)
		}
		n, _ := io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		want = append(want, requestLine{Msg: "request", Method: http.MethodGet, Path: r.path, Route: r.route, Status: r.status,
			Bytes: n, RequestID: res.Header.Get("X-Request-ID"), Remote: "127.0.0.1"})
	}
	close(sink.open)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	done <- nil // for the deferred receive

	var got []requestLine
	sc := bufio.NewScanner(bytes.NewReader(sink.buf.Bytes()))
	for sc.Scan() {
		var l requestLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if l.Msg != "request" {
			continue
		}
		if l.DurationMS == nil || l.RequestID == "" {
			t.Errorf("line for %s lacks duration_ms or request_id: %s", l.Path, sc.Text())
		}
		got = append(got, l)
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(requestLine{}, "DurationMS")); diff != "" {
		t.Errorf("request lines once Serve returned (-want +got):\n%s", diff)
	}
}

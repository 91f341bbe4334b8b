package server

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// laneWriterPair is a laneWriter, ready for a request (a HEAD when head), on one end of a
// loopback TCP connection, and a reader of what it sends on the other.
func laneWriterPair(t *testing.T, head bool) (*laneWriter, *bufio.Reader) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	_ = client.SetDeadline(time.Now().Add(10 * time.Second))
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sc.Close() })
	hc, err := newHeldConn(sc.(*net.TCPConn))
	if err != nil {
		t.Fatal(err)
	}
	w := &laneWriter{c: hc, h: http.Header{}}
	w.reset(head)
	return w, bufio.NewReader(client)
}

// TestLaneWriterAnswersAsNetHTTP: what a handler writes reaches the client as net/http
// would send it: a Content-Length for a body the handler did not measure, a sniffed
// Content-Type, a Date, CR and LF in values as spaces, fields with invalid names left out,
// no body for a HEAD or a 304; and the connection is kept only when the body sent is the
// length the head announced.
func TestLaneWriterAnswersAsNetHTTP(t *testing.T) {
	t.Run("measured body", func(t *testing.T) {
		w, br := laneWriterPair(t, false)
		w.Header().Set("X-Value", "a\r\nb\nc")
		w.Header()["Bad Name"] = []string{"x"}
		_, _ = io.WriteString(w, "<html>hello")
		if !w.finish() {
			t.Fatal("finish: connection not kept")
		}
		res, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 || string(body) != "<html>hello" || res.ContentLength != 11 {
			t.Errorf("status %d, body %q, length %d", res.StatusCode, body, res.ContentLength)
		}
		if got := res.Header.Get("Content-Type"); got != "text/html; charset=utf-8" {
			t.Errorf("Content-Type %q, want the sniffed text/html", got)
		}
		if got := res.Header.Get("X-Value"); got != "a  b c" {
			t.Errorf("X-Value %q, want CR and LF as spaces", got)
		}
		if _, ok := res.Header["Bad Name"]; ok || res.Header.Get("Date") == "" {
			t.Errorf("fields %v: want a Date and no invalid name", res.Header)
		}
	})
	t.Run("head and not modified", func(t *testing.T) {
		for _, tc := range []struct {
			head   bool
			status int
		}{{true, 200}, {false, 304}} {
			w, br := laneWriterPair(t, tc.head)
			w.Header().Set("Content-Length", "5")
			w.WriteHeader(tc.status)
			_, _ = io.WriteString(w, "hello")
			if !w.finish() {
				t.Fatalf("head %v, %d: connection not kept", tc.head, tc.status)
			}
			_, _ = io.WriteString(w.c, "NEXT") // what follows the answer on the wire
			method := map[bool]string{true: http.MethodHead, false: http.MethodGet}[tc.head]
			res, err := http.ReadResponse(br, &http.Request{Method: method})
			if err != nil {
				t.Fatal(err)
			}
			_ = res.Body.Close()
			rest := make([]byte, 4)
			if _, err := io.ReadFull(br, rest); err != nil || string(rest) != "NEXT" {
				t.Errorf("head %v, %d: after the head %q, %v (a body was sent)", tc.head, tc.status, rest, err)
			}
		}
	})
	t.Run("long body of its length", func(t *testing.T) {
		w, br := laneWriterPair(t, false)
		big := strings.Repeat("y", 100<<10)
		w.Header().Set("Content-Length", strconv.Itoa(len(big)))
		done := make(chan bool, 1)
		go func() {
			for i := 0; i < len(big); i += 32 << 10 {
				_, _ = io.WriteString(w, big[i:min(i+32<<10, len(big))])
			}
			done <- w.finish()
		}()
		res, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		if !<-done || res.Close || string(body) != big {
			t.Errorf("a body of its Content-Length past the kept size: connection kept %v, %d bytes", !res.Close, len(body))
		}
	})
	t.Run("never past the length", func(t *testing.T) {
		w, br := laneWriterPair(t, false)
		w.Header().Set("Content-Length", "5")
		_, _ = io.WriteString(w, "hello")
		if n, err := io.WriteString(w, "HTTP/1.1 200 OK\r\n"); n != 0 || err != http.ErrContentLength {
			t.Errorf("a write past the Content-Length: %d, %v", n, err)
		}
		if !w.finish() {
			t.Error("connection not kept")
		}
		_, _ = io.WriteString(w.c, "NEXT")
		res, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		rest := make([]byte, 4)
		_, _ = io.ReadFull(br, rest)
		if string(body) != "hello" || string(rest) != "NEXT" {
			t.Errorf("body %q then %q, want hello then NEXT", body, rest)
		}
	})
	t.Run("fields net/http drops or adds", func(t *testing.T) {
		w, br := laneWriterPair(t, true)
		w.Header().Set("Content-Length", "abc")
		w.Header().Set("Transfer-Encoding", "chunked")
		w.WriteHeader(599)
		_, _ = io.WriteString(w, "hello")
		if !w.finish() {
			t.Error("connection not kept")
		}
		_, _ = io.WriteString(w.c, "NEXT")
		line, _ := br.ReadString('\n')
		res, err := http.ReadResponse(bufio.NewReader(io.MultiReader(strings.NewReader(line), br)), &http.Request{Method: http.MethodHead})
		if err != nil {
			t.Fatal(err)
		}
		if line != "HTTP/1.1 599 status code 599\r\n" {
			t.Errorf("status line %q", line)
		}
		if len(res.TransferEncoding) != 0 || res.Header.Get("Content-Length") != "5" {
			t.Errorf("fields %v: want no Transfer-Encoding and the HEAD's written length", res.Header)
		}
	})
	t.Run("handler's connection close", func(t *testing.T) {
		w, br := laneWriterPair(t, false)
		w.Header().Set("Connection", "close")
		_, _ = io.WriteString(w, "bye")
		if w.finish() {
			t.Error("an answer with Connection: close kept the connection")
		}
		res, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
		if err != nil || !res.Close {
			t.Errorf("response %v, Close %v", err, res != nil && res.Close)
		}
	})
	t.Run("no body for a 304", func(t *testing.T) {
		w, _ := laneWriterPair(t, false)
		w.WriteHeader(http.StatusNotModified)
		if _, err := io.WriteString(w, "x"); err != http.ErrBodyNotAllowed {
			t.Errorf("a 304's body write: %v", err)
		}
	})
	t.Run("no large buffer kept", func(t *testing.T) {
		w, br := laneWriterPair(t, false)
		_, _ = io.WriteString(w, strings.Repeat("z", 60<<10)) // kept whole, sent at finish
		go func() {
			res, err := http.ReadResponse(br, nil)
			if err == nil {
				_, _ = io.Copy(io.Discard, res.Body)
			}
		}()
		if !w.finish() {
			t.Fatal("connection not kept")
		}
		if cap(w.body) > laneKeep || cap(w.c.held) > laneKeep {
			t.Errorf("after a 60 KiB answer the idle connection keeps %d + %d bytes of buffers", cap(w.body), cap(w.c.held))
		}
	})
	t.Run("length mismatch", func(t *testing.T) {
		w, _ := laneWriterPair(t, false)
		w.Header().Set("Content-Length", "10")
		_, _ = io.WriteString(w, "hello")
		if w.finish() {
			t.Error("a body shorter than its Content-Length kept the connection")
		}
	})
	t.Run("long body of unknown length", func(t *testing.T) {
		w, br := laneWriterPair(t, false)
		w.Header().Set("Content-Type", "text/plain")
		big := strings.Repeat("x", laneBodyMax+1)
		done := make(chan bool, 1)
		go func() {
			_, _ = io.WriteString(w, big[:100])
			_, _ = io.WriteString(w, big[100:])
			keep := w.finish()
			_ = w.c.Close() // as the lane does when finish says not to keep it
			done <- keep
		}()
		res, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		if keep := <-done; keep {
			t.Error("a body without a length kept the connection")
		}
		if err != nil || len(body) != len(big) || !res.Close {
			t.Errorf("body %d bytes (%v), want %d ending with the connection (Connection: close %v)", len(body), err, len(big), res.Close)
		}
	})
}

// TestLaneFinishesAnswersInFlightAtClose: a lane connection answering a request when the
// listener closes sends its whole answer, then closes instead of reading another request,
// and wait returns once it has.
func TestLaneFinishesAnswersInFlightAtClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(entered)
		<-release
		_, _ = io.WriteString(w, "answer")
	})
	var served atomic.Int64
	l := newLane(ln, &http.Server{IdleTimeout: time.Minute, ReadHeaderTimeout: time.Minute}, h,
		func(p []byte) bool { return string(p) == "/index.json" }, &served, nil, slog.New(slog.DiscardHandler))
	defer l.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET /index.json HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	<-entered
	_ = l.Close()
	close(release)
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		t.Fatalf("the answer in flight at Close: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	if string(body) != "answer" || !res.Close {
		t.Errorf("body %q, Connection: close %v (want the answer, and no keep-alive while closing)", body, res.Close)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.wait(ctx); err != nil {
		t.Errorf("wait: %v (the connection stayed open after its answer)", err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after its answer the connection reads %v, want it closed", err)
	}
}

// laneAt serves h on a new lane with hs's timeouts, and returns its address.
func laneAt(t *testing.T, hs *http.Server, h http.Handler) (*laneListener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var served atomic.Int64
	l := newLane(ln, hs, h, func(p []byte) bool { return string(p) == "/index.json" }, &served, nil, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { _ = l.Close() })
	return l, ln.Addr().String()
}

// TestLaneIdleAndWriteTimeouts: a connection idle past the idle timeout after an answer is
// closed; an answer its client does not read is given up after the write timeout.
func TestLaneIdleAndWriteTimeouts(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		_, addr := laneAt(t, &http.Server{IdleTimeout: 300 * time.Millisecond, ReadHeaderTimeout: time.Minute},
			http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		_, _ = io.WriteString(c, "GET /index.json HTTP/1.1\r\nHost: x\r\n\r\n")
		br := bufio.NewReader(c)
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.ReadAll(res.Body)
		if _, err := br.ReadByte(); err != io.EOF {
			t.Errorf("an idle connection: %v, want it closed after the idle timeout", err)
		}
	})
	t.Run("write", func(t *testing.T) {
		gaveUp := make(chan error, 1)
		_, addr := laneAt(t, &http.Server{WriteTimeout: 300 * time.Millisecond, ReadHeaderTimeout: time.Minute},
			http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				chunk := make([]byte, 1<<20)
				for range 256 { // 256 MiB: more than any socket buffer holds
					if _, err := w.Write(chunk); err != nil {
						gaveUp <- err
						return
					}
				}
				gaveUp <- nil
			}))
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = io.WriteString(c, "GET /index.json HTTP/1.1\r\nHost: x\r\n\r\n") // and never read
		select {
		case err := <-gaveUp:
			if err == nil {
				t.Error("256 MiB written to a client that reads nothing")
			}
		case <-time.After(20 * time.Second):
			t.Error("an answer its client does not read was not given up")
		}
	})
}

// FuzzLaneReadsAsNetHTTP: whatever head the lane answers, net/http reads the same bytes as
// the same request: method, path, Host, fields, no body, and the same end (the next
// request starts where the lane says). A head where the two would differ is a head two
// readers of one connection could split differently; the lane must hand it over.
func FuzzLaneReadsAsNetHTTP(f *testing.F) {
	for _, s := range []string{
		"GET /index.json HTTP/1.1\r\nHost: x\r\n\r\n",
		"HEAD /index.json HTTP/1.1\r\nhost: [::1]:80\r\naccept-encoding: gzip, br;q=0.5\r\nConnection: Keep-Alive\r\n\r\nGET /",
		"GET /curupira/index.json HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"a\", W/\"b\"\r\nIf-Modified-Since: Mon, 02 Jan 2006 15:04:05 GMT\r\n\r\n",
		"GET /index.json HTTP/1.1\r\nHost: x\r\nUser-Agent: \t a b \t\r\nAccept: */*\r\n\r\n",
		"GET /index.json HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc",
		"GET /index.json HTTP/1.1\r\nHost: x\r\n Accept: a\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	l := &laneListener{fast: func(p []byte) bool { return string(p) == "/index.json" || string(p) == "/curupira/index.json" }}
	f.Fuzz(func(t *testing.T, raw []byte) {
		i := bytes.Index(raw, crlfcrlf)
		if i < 0 || len(raw) > laneHeadMax {
			return // readHead hands such bytes over
		}
		end := i + 4
		lr, ok := l.request(raw[:end], "192.0.2.1:1")
		if !ok {
			return
		}
		br := bufio.NewReaderSize(bytes.NewReader(raw), len(raw)+16)
		nr, err := http.ReadRequest(br)
		if err != nil {
			t.Fatalf("the lane answers %q; net/http refuses it: %v", raw[:end], err)
		}
		if consumed := len(raw) - br.Buffered(); consumed != end {
			t.Fatalf("%q: net/http's request ends at byte %d, the lane's at %d", raw, consumed, end)
		}
		if nr.Method != lr.Method || nr.URL.Path != lr.URL.Path || nr.URL.RawQuery != "" || nr.URL.RawPath != "" ||
			nr.Host != lr.Host || nr.ContentLength != 0 || len(nr.TransferEncoding) != 0 || nr.Close {
			t.Fatalf("%q: net/http reads %s %s (host %q, length %d, TE %v, close %v); the lane %s %s (host %q)", raw[:end],
				nr.Method, nr.URL, nr.Host, nr.ContentLength, nr.TransferEncoding, nr.Close, lr.Method, lr.URL, lr.Host)
		}
		if !reflect.DeepEqual(nr.Header, lr.Header) {
			t.Fatalf("%q: fields differ: net/http %v, lane %v", raw[:end], nr.Header, lr.Header)
		}
	})
}

package server

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// laneWriterPair is a laneWriter on one end of a loopback TCP connection and a reader of
// what it sends on the other.
func laneWriterPair(t *testing.T) (*laneWriter, *bufio.Reader) {
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
	w := &laneWriter{c: &heldConn{TCPConn: sc.(*net.TCPConn)}, h: http.Header{}}
	return w, bufio.NewReader(client)
}

// TestLaneWriterAnswersAsNetHTTP: what a handler writes reaches the client as net/http
// would send it: a Content-Length for a body the handler did not measure, a sniffed
// Content-Type, a Date, CR and LF in values as spaces, fields with invalid names left out,
// no body for a HEAD or a 304; and the connection is kept only when the body sent is the
// length the head announced.
func TestLaneWriterAnswersAsNetHTTP(t *testing.T) {
	t.Run("measured body", func(t *testing.T) {
		w, br := laneWriterPair(t)
		w.reset(false)
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
			w, br := laneWriterPair(t)
			w.reset(tc.head)
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
	t.Run("length mismatch", func(t *testing.T) {
		w, _ := laneWriterPair(t)
		w.reset(false)
		w.Header().Set("Content-Length", "10")
		_, _ = io.WriteString(w, "hello")
		if w.finish() {
			t.Error("a body shorter than its Content-Length kept the connection")
		}
	})
	t.Run("long body of unknown length", func(t *testing.T) {
		w, br := laneWriterPair(t)
		w.reset(false)
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
		func(p []byte) bool { return string(p) == "/index.json" }, &served, slog.New(slog.DiscardHandler))
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
	if string(body) != "answer" {
		t.Errorf("body %q", body)
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

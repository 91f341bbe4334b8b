//go:build linux

package server

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// TestCorkConn: corkConn sets TCP_CORK on the request's connection and its result clears
// it; a request without a connection in its context is left alone.
func TestCorkConn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			defer c.Close()
			_, _ = io.Copy(io.Discard, c)
		}
	}()
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	corked := func() int {
		raw, err := conn.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		v := -1
		_ = raw.Control(func(fd uintptr) { v, _ = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK) })
		return v
	}
	req := httptest.NewRequest(http.MethodGet, "/index.json", nil)
	corkConn(req)() // no connection in the context: nothing to do, no panic
	req = req.WithContext(withConn(context.Background(), conn))
	uncork := corkConn(req)
	if v := corked(); v != 1 {
		t.Fatalf("TCP_CORK after corkConn = %d, want 1", v)
	}
	uncork()
	if v := corked(); v != 0 {
		t.Fatalf("TCP_CORK after uncork = %d, want 0", v)
	}
}

// writeRecorder is a ResponseWriter whose ReadFrom records that it was reached.
type writeRecorder struct {
	*httptest.ResponseRecorder
	readFrom bool
}

func (w *writeRecorder) ReadFrom(r io.Reader) (int64, error) {
	w.readFrom = true
	return io.Copy(w.ResponseRecorder, r)
}

// TestServeContentFromMemoryWritesOnce: a whole body from memory goes to the response's
// Write in one call, not to the connection's ReadFrom (which would copy it in 32 KiB
// chunks), and echo counts its size; a range still comes through ReadFrom, cut to size.
func TestServeContentFromMemoryWritesOnce(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	serve := func(rangeHeader string) (*writeRecorder, *echo.Response) {
		req := httptest.NewRequest(http.MethodGet, "/index.json", nil)
		if rangeHeader != "" {
			req.Header.Set("Range", rangeHeader)
		}
		w := &writeRecorder{ResponseRecorder: httptest.NewRecorder()}
		c := echo.New().NewContext(req, w)
		serveContent(c, time.Unix(1e9, 0), bytes.NewReader(body), 0)
		return w, c.Response()
	}
	w, res := serve("")
	if w.readFrom {
		t.Error("a whole body from memory reached ReadFrom; want one Write")
	}
	if !bytes.Equal(w.Body.Bytes(), body) || res.Status != http.StatusOK || res.Size != int64(len(body)) {
		t.Errorf("served %d bytes, echo saw status %d size %d; want 200, %d", w.Body.Len(), res.Status, res.Size, len(body))
	}
	w, res = serve("bytes=10-19")
	if !w.readFrom || !bytes.Equal(w.Body.Bytes(), body[10:20]) || res.Status != http.StatusPartialContent || res.Size != 10 {
		t.Errorf("range: ReadFrom %v, body %q, status %d size %d; want ReadFrom, %q, 206, 10", w.readFrom, w.Body.Bytes(), res.Status, res.Size, body[10:20])
	}
}

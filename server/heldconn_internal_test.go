package server

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/index"
)

// TestHeldConnSendsResponseInOneWrite: through a real http.Server on heldListener, a whole
// body from writeWhole leaves with its response head in one writev, whatever its size; a
// HEAD, a body too short for net/http's ReadFrom and a plain Write still arrive whole; and
// a request whose connection is not held (httptest's recorder) gets one Write.
func TestHeldConnSendsResponseInOneWrite(t *testing.T) {
	sends := make(chan int, 1)
	srv := &http.Server{ConnContext: withConn, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hc, _ := r.Context().Value(connKey{}).(*heldConn)
		if hc == nil {
			t.Error("no *heldConn in the request's context")
			return
		}
		size, _ := strconv.Atoi(r.URL.Query().Get("size"))
		body := bytes.Repeat([]byte("0123456789abcdef"), size/16)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		before := hc.sends
		if r.URL.Query().Has("plain") {
			_, _ = w.Write(body)
		} else if r.Method != http.MethodHead {
			parts := splitParts(body, r.URL.Query().Get("parts"))
			kept := slices.Clone(parts)
			if n, err := writeWhole(r, w, index.NewBody(parts)); n != int64(len(body)) || err != nil {
				t.Errorf("writeWhole = %d, %v; want %d, nil", n, err, len(body))
			}
			if !slices.EqualFunc(parts, kept, func(a, b []byte) bool { return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0]) }) {
				t.Error("writeWhole changed the body's list of parts")
			}
			if slices.ContainsFunc(hc.bufs[:cap(hc.bufs)], func(b []byte) bool { return b != nil }) {
				t.Error("the connection keeps a part of the body after writing it")
			}
			if cap(hc.bufs) > iovMax {
				t.Errorf("the connection keeps a writev list of %d parts, want at most %d (iovMax)", cap(hc.bufs), iovMax)
			}
		}
		sends <- hc.sends - before
	})}
	addr := serveOnHeld(t, srv)
	for _, tc := range []struct {
		method, query string
		size          int
		sends         int // during the handler; -1: any
	}{
		{http.MethodGet, "size=65536", 65536, 1},
		{http.MethodGet, "size=1048576", 1 << 20, 1},
		{http.MethodGet, "size=65536&parts=1000", 65536, 1}, // a document of many entries: still one call
		{http.MethodGet, "size=1048576&parts=3000", 1 << 20, 1},
		{http.MethodGet, "size=256", 256, 0}, // all in net/http's buffer: one write after the handler
		{http.MethodHead, "size=65536", 0, 0},
		{http.MethodGet, "size=65536&plain", 65536, -1},
	} {
		req, _ := http.NewRequest(tc.method, "http://"+addr+"/?"+tc.query, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if want := bytes.Repeat([]byte("0123456789abcdef"), tc.size/16); !bytes.Equal(got, want) {
			t.Errorf("%s ?%s: got %d bytes, want %d", tc.method, tc.query, len(got), len(want))
		}
		if n := <-sends; tc.sends >= 0 && n != tc.sends {
			t.Errorf("%s ?%s: %d writes during the handler, want %d", tc.method, tc.query, n, tc.sends)
		}
	}
	// Without a held connection (a recorder), writeWhole is one Write.
	rec := httptest.NewRecorder()
	if n, err := writeWhole(httptest.NewRequest(http.MethodGet, "/", nil), rec, index.BodyOf([]byte("body"))); n != 4 || err != nil || rec.Body.String() != "body" {
		t.Errorf("writeWhole to a recorder = %d, %v, %q; want 4, nil, body", n, err, rec.Body.String())
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

// TestHeldConnBoundsWhatItHolds: a hold keeps at most heldMax bytes; a write that would
// pass it sends what is held and itself at once, in order.
func TestHeldConnBoundsWhatItHolds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(c)
		got <- b
	}()
	c, err := heldListener{ln}.Accept()
	if err != nil {
		t.Fatal(err)
	}
	hc := c.(*heldConn)
	hc.holding = true
	head, big := []byte("head"), bytes.Repeat([]byte{'x'}, heldMax)
	if _, err := hc.Write(head); err != nil || hc.sends != 0 || len(hc.held) != len(head) {
		t.Fatalf("a small write while holding: %v, %d sends, %d held; want kept", err, hc.sends, len(hc.held))
	}
	if n, err := hc.Write(big); n != len(big) || err != nil || hc.sends != 1 || len(hc.held) != 0 {
		t.Fatalf("a write past heldMax: %d, %v, %d sends, %d held; want it sent with what was held", n, err, hc.sends, len(hc.held))
	}
	hc.release()
	_ = hc.Close()
	if b := <-got; !bytes.Equal(b, append(head, big...)) {
		t.Errorf("peer read %d bytes, want %d", len(b), len(head)+len(big))
	}
}

// serveHeld runs an http.Server on heldListener whose handler answers ?size=N with N bytes
// through writeWhole (with ?plain through one Write; with ?fail after the connection's
// write deadline has passed), and returns its address; writeWhole's results go to results.
func serveHeld(t *testing.T, results chan<- error) string {
	t.Helper()
	srv := &http.Server{ConnContext: withConn, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hc, _ := r.Context().Value(connKey{}).(*heldConn)
		size, _ := strconv.Atoi(r.URL.Query().Get("size"))
		body := bytes.Repeat([]byte("0123456789abcdef"), size/16)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		var err error
		switch {
		case r.URL.Query().Has("plain"):
			_, err = w.Write(body)
		case r.Method == http.MethodHead:
		default:
			if r.URL.Query().Has("fail") {
				_ = hc.SetWriteDeadline(time.Now().Add(-time.Second))
			}
			var n int64
			if n, err = writeWhole(r, w, index.NewBody(splitParts(body, r.URL.Query().Get("parts")))); err == nil && n != int64(len(body)) {
				err = io.ErrShortWrite
			}
			if slices.ContainsFunc(hc.bufs[:cap(hc.bufs)], func(b []byte) bool { return b != nil }) {
				err = errors.Join(err, errors.New("the connection keeps a part of the body after writing it"))
			}
		}
		results <- err
	})}
	return serveOnHeld(t, srv)
}

// heldListener wraps the *net.TCPConn connections a listener accepts in *heldConn, as the
// lane does for those it hands net/http (heldConn alone, without the lane).
type heldListener struct{ net.Listener }

func (l heldListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		return newHeldConn(tc)
	}
	return c, err
}

// serveOnHeld runs srv on a heldListener on a free loopback port until the test ends and
// returns its address.
func serveOnHeld(tb testing.TB, srv *http.Server) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	go func() { _ = srv.Serve(heldListener{ln}) }()
	tb.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// TestHeldConnPipelinedResponsesStayWhole: requests sent back to back on one connection
// (held and plain answers, a HEAD, bodies shorter than net/http's sniff and longer than
// heldMax) get their responses in order, each whole: a hold never keeps or leaks bytes
// into the next response, nor stays on for the next request.
func TestHeldConnPipelinedResponsesStayWhole(t *testing.T) {
	results := make(chan error, 16)
	c, err := net.Dial("tcp", serveHeld(t, results))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	reqs := []struct {
		method, query string
		size          int
	}{
		{http.MethodGet, "size=65536", 65536},
		{http.MethodHead, "size=65536", 65536},
		{http.MethodGet, "size=256", 256},
		{http.MethodGet, "size=512", 512},
		{http.MethodGet, "size=1048576", 1 << 20},
		{http.MethodGet, "size=32768", 32768},
		{http.MethodGet, "size=4096&plain", 4096}, // last: a hold left on would keep it
	}
	var out bytes.Buffer
	for _, rq := range reqs {
		out.WriteString(rq.method + " /?" + rq.query + " HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	if _, err := c.Write(out.Bytes()); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second)) // a liveness bound, not a timing assertion
	br := bufio.NewReader(c)
	for _, rq := range reqs {
		res, err := http.ReadResponse(br, &http.Request{Method: rq.method})
		if err != nil {
			t.Fatalf("%s ?%s: %v", rq.method, rq.query, err)
		}
		got, err := io.ReadAll(res.Body)
		res.Body.Close()
		want := bytes.Repeat([]byte("0123456789abcdef"), rq.size/16)
		if rq.method == http.MethodHead {
			want = nil
		}
		if err != nil || !bytes.Equal(got, want) || res.ContentLength != int64(rq.size) {
			t.Errorf("%s ?%s: %d bytes (%v), Content-Length %d; want %d bytes of %d", rq.method, rq.query, len(got), err, res.ContentLength, len(want), rq.size)
		}
		if err := <-results; err != nil {
			t.Errorf("%s ?%s: handler: %v", rq.method, rq.query, err)
		}
	}
}

// TestHeldConnFailedWriteEndsTheConnection: when the writev of a held response fails (its
// write deadline passed), writeWhole reports it, the connection keeps none of the body's
// parts, and net/http closes the connection instead of answering the next request on it
// after a response cut short.
func TestHeldConnFailedWriteEndsTheConnection(t *testing.T) {
	results := make(chan error, 4)
	c, err := net.Dial("tcp", serveHeld(t, results))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /?size=65536&parts=100&fail HTTP/1.1\r\nHost: x\r\n\r\nGET /?size=256 HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if err := <-results; err == nil {
		t.Error("writeWhole past the write deadline reported no error")
	} else if strings.Contains(err.Error(), "keeps a part") { // a failed writev consumed nothing
		t.Error(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second)) // a liveness bound, not a timing assertion
	if got, err := io.ReadAll(c); err != nil || len(got) != 0 {
		t.Errorf("after the failed response the client read %d bytes (%v); want the connection closed with nothing sent", len(got), err)
	}
}

// TestHeldConnReleaseFailureClosesConnection: a hold whose bytes cannot be written when it
// ends closes the connection: net/http already counted them as written and would serve the
// next request on a connection whose response was cut short.
func TestHeldConnReleaseFailureClosesConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	c, err := heldListener{ln}.Accept()
	if err != nil {
		t.Fatal(err)
	}
	hc := c.(*heldConn)
	defer hc.Close()
	hc.holding = true
	if _, err := hc.Write([]byte("HTTP/1.1 200 OK\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = hc.SetWriteDeadline(time.Now().Add(-time.Second))
	hc.release()
	if _, err := hc.Write([]byte("next")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("a write after a failed release: %v; want %v", err, net.ErrClosed)
	}
}

// splitParts cuts body into n parts of about equal length (one part when n is empty).
func splitParts(body []byte, n string) [][]byte {
	k, _ := strconv.Atoi(n)
	if k <= 1 {
		return [][]byte{body}
	}
	var parts [][]byte
	for i := range k {
		parts = append(parts, body[i*len(body)/k:(i+1)*len(body)/k])
	}
	return parts
}

package server

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
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
			if n, err := writeWhole(r, w, body); n != int64(len(body)) || err != nil {
				t.Errorf("writeWhole = %d, %v; want %d, nil", n, err, len(body))
			}
		}
		sends <- hc.sends - before
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(heldListener{ln}) }()
	defer srv.Close()
	for _, tc := range []struct {
		method, query string
		size          int
		sends         int // during the handler; -1: any
	}{
		{http.MethodGet, "size=65536", 65536, 1},
		{http.MethodGet, "size=1048576", 1 << 20, 1},
		{http.MethodGet, "size=256", 256, 0}, // all in net/http's buffer: one write after the handler
		{http.MethodHead, "size=65536", 0, 0},
		{http.MethodGet, "size=65536&plain", 65536, -1},
	} {
		req, _ := http.NewRequest(tc.method, "http://"+ln.Addr().String()+"/?"+tc.query, nil)
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
	if n, err := writeWhole(httptest.NewRequest(http.MethodGet, "/", nil), rec, []byte("body")); n != 4 || err != nil || rec.Body.String() != "body" {
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

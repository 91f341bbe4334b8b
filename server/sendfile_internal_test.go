package server

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// readFromRecorder is a connection-like ResponseWriter: it records what its ReadFrom was
// handed, as net/http's response hands an *os.File (under an io.LimitedReader) to sendfile.
type readFromRecorder struct {
	*httptest.ResponseRecorder
	src io.Reader
}

func (w *readFromRecorder) ReadFrom(r io.Reader) (int64, error) {
	w.src = r
	return io.Copy(w.ResponseRecorder, r)
}

// TestServeContentReachesReadFrom checks that a file served through echo's response still
// reaches the underlying writer's ReadFrom, as a file (the sendfile path), and that echo
// counts status and size.
func TestServeContentReachesReadFrom(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	path := filepath.Join(t.TempDir(), "doc.json")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := &readFromRecorder{ResponseRecorder: httptest.NewRecorder()}
	c := echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/index.json", nil), w)
	serveContent(c, time.Unix(1e9, 0), f, 0)
	lr, ok := w.src.(*io.LimitedReader)
	if !ok {
		t.Fatalf("ReadFrom got %T, want *io.LimitedReader", w.src)
	}
	if _, isFile := lr.R.(*os.File); !isFile {
		t.Fatalf("ReadFrom got a LimitedReader over %T, want *os.File", lr.R)
	}
	if !bytes.Equal(w.Body.Bytes(), body) || c.Response().Status != http.StatusOK || c.Response().Size != int64(len(body)) {
		t.Errorf("served %d bytes, echo saw status %d size %d", w.Body.Len(), c.Response().Status, c.Response().Size)
	}
}

// BenchmarkServeDocument serves a body of each size over loopback TCP through
// serveContent, from its file (sendfile, as package downloads are) and from memory (as a
// document's range and conditional requests are; a plain GET of one goes through
// serveBytes, BenchmarkIndexGzip).
func BenchmarkServeDocument(b *testing.B) {
	for _, size := range []int{64 << 10, 1 << 20, 5 << 20} {
		body := bytes.Repeat([]byte("x"), size)
		path := filepath.Join(b.TempDir(), "doc.json")
		if err := os.WriteFile(path, body, 0o600); err != nil {
			b.Fatal(err)
		}
		e := echo.New()
		e.GET("/file", func(c echo.Context) error {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			serveContent(c, time.Unix(1e9, 0), f, 0)
			return nil
		})
		e.GET("/memory", func(c echo.Context) error {
			serveContent(c, time.Unix(1e9, 0), bytes.NewReader(body), 0)
			return nil
		})
		srv := httptest.NewServer(e)
		for _, from := range []string{"file", "memory"} {
			b.Run(from+"/"+strconv.Itoa(size>>10)+"KiB", func(b *testing.B) {
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					res, err := srv.Client().Get(srv.URL + "/" + from)
					if err != nil {
						b.Fatal(err)
					}
					n, _ := io.Copy(io.Discard, res.Body)
					_ = res.Body.Close()
					if n != int64(size) {
						b.Fatalf("%d bytes", n)
					}
				}
			})
		}
		srv.Close()
	}
}

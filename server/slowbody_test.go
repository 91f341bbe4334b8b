package server_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pluginyard/registry/server"
)

// serveOn runs srv on a real loopback listener until the test ends and returns its address.
func serveOn(t *testing.T, srv *server.Server) string {
	t.Helper()
	addr, _ := serveUntil(t, srv)
	return addr
}

// serveUntil runs srv on a real loopback listener and returns its address and stop, which
// ends Serve and returns what it returned (at the latest when the test ends).
func serveUntil(t *testing.T, srv *server.Server) (addr string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var once sync.Once
	var serr error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case serr = <-done:
			case <-time.After(30 * time.Second): // a liveness bound: Serve gives in-flight requests 20 s
				serr = errors.New("Serve did not return")
			}
		})
		return serr
	}
	t.Cleanup(func() { _ = stop() })
	return ln.Addr().String(), stop
}

// dripBody sends head (a request whose headers declare a 100 KB body), then drips the
// body one byte every 20 ms for up to 10 s, and reports whether the server closed the
// connection before then.
func dripBody(t *testing.T, addr, head string) bool {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	closed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, conn) // returns when the server closes the connection
		close(closed)
	}()
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	for range 500 { // 500 × 20 ms = 10 s, 50× the test's ReadTimeout
		select {
		case <-closed:
			return true
		case <-time.After(20 * time.Millisecond):
		}
		if _, err := conn.Write([]byte{'x'}); err != nil {
			return true // the server hung up
		}
	}
	return false
}

// TestDrippedBodyIsCutOff: a request that declares a large body and drips it is cut off
// by ReadTimeout on every route that reads a body, the publish route included once its
// (longer) upload deadline has passed.
func TestDrippedBodyIsCutOff(t *testing.T) {
	e := newEnvWith(t, server.Config{}, nil, true)
	srv := server.New(server.Config{PublicURL: "http://x", AdminSecret: adminToken, ReadTimeout: 200 * time.Millisecond,
		UploadTimeout: 400 * time.Millisecond}, e.svc, e.st, slog.New(slog.NewTextHandler(io.Discard, nil)))
	addr := serveOn(t, srv)
	for _, head := range []string{
		"GET /index.json HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n",
		"POST /api/v1/auth/oidc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n",
		"POST /api/v1/packages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + adminToken +
			"\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n--b\r\n",
	} {
		if !dripBody(t, addr, head) {
			t.Errorf("the server still read a dripped body after 10 s: %q", head)
		}
	}
}

// TestSlowUploadOutlivesReadTimeout: a publish body that takes longer than ReadTimeout
// (but less than UploadTimeout) is read to its end and answered, not cut off.
func TestSlowUploadOutlivesReadTimeout(t *testing.T) {
	e := newEnvWith(t, server.Config{}, nil, true)
	srv := server.New(server.Config{PublicURL: "http://x", AdminSecret: adminToken, ReadTimeout: 100 * time.Millisecond,
		UploadTimeout: time.Minute}, e.svc, e.st, slog.New(slog.NewTextHandler(io.Discard, nil)))
	addr := serveOn(t, srv)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const chunks = 20 // 20 × 25 ms = 500 ms, 5× ReadTimeout
	body := "--b\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\n"
	for range chunks {
		body += "y"
	}
	body += "\r\n--b--\r\n"
	head := "POST /api/v1/packages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + adminToken +
		"\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	start, rest := body[:len(body)-chunks-len("\r\n--b--\r\n")], body[len(body)-chunks-len("\r\n--b--\r\n"):]
	if _, err := io.WriteString(conn, start); err != nil {
		t.Fatal(err)
	}
	for i := range rest {
		time.Sleep(25 * time.Millisecond)
		if _, err := io.WriteString(conn, rest[i:i+1]); err != nil {
			t.Fatalf("the server hung up on a slow upload within its UploadTimeout: %v", err)
		}
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a slow upload within its UploadTimeout: %v", err)
	}
	defer res.Body.Close()
	// The body has no "package" field: a 400 that names it shows the whole body was read.
	msg, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), `missing the \"package\" file field`) {
		t.Fatalf("got %d %s, want 400 missing the \"package\" field", res.StatusCode, msg)
	}
}

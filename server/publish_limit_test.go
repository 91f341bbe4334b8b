package server_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pluginyard/registry/server"
)

// countingBody is a request body of head followed by zeros, size bytes in all, that counts
// what the server reads of it.
type countingBody struct {
	head      string
	size, off int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	if b.off >= b.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), b.size-b.off))
	for i := range n {
		if at := b.off + int64(i); at < int64(len(b.head)) {
			p[i] = b.head[at]
		} else {
			p[i] = 0
		}
	}
	b.off += int64(n)
	return n, nil
}

const limitBoundary = "limit-test-boundary"

// multipartHead opens the package part of a multipart body, whose bytes then follow.
const multipartHead = "--" + limitBoundary + "\r\n" +
	"Content-Disposition: form-data; name=\"package\"; filename=\"acme-hello-1.0.0.tar.gz\"\r\n" +
	"Content-Type: application/gzip\r\n\r\n"

// publishThrough sends body to POST /api/v1/packages of a registry with limit as its
// --max-body, straight into its handler, and returns the status and the error message.
func publishThrough(t *testing.T, limit int64, body *countingBody, contentLength int64) (int, string) {
	t.Helper()
	e := newEnv(t, "")
	h := server.New(server.Config{PublicURL: e.srv.URL, AdminSecret: adminToken, MaxBodyBytes: limit}, e.svc, e.st,
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	req := httptest.NewRequest(http.MethodPost, "/api/v1/packages", body)
	req.ContentLength = contentLength
	req.Header.Set("Content-Type", "multipart/form-data; boundary="+limitBoundary)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var ans struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &ans); err != nil {
		t.Fatalf("answer %d is not JSON: %q", rec.Code, rec.Body)
	}
	return rec.Code, ans.Error
}

// TestPublishRefusesADeclaredSizeOverTheLimitUnread checks that a Content-Length over
// --max-body is answered 413 from the header alone: not one byte of the body is read, and
// the answer names both sizes in MiB and the setting.
func TestPublishRefusesADeclaredSizeOverTheLimitUnread(t *testing.T) {
	const size = 110_000_000
	body := &countingBody{head: multipartHead, size: size}
	code, msg := publishThrough(t, 100<<20, body, size)
	if code != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413", code)
	}
	if body.off != 0 {
		t.Errorf("the server read %d bytes of a body it refuses from its Content-Length", body.off)
	}
	if want := "the upload is 104.9 MiB (110 000 000 bytes); this registry accepts at most 100 MiB (--max-body)"; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
}

// TestPublishStopsAChunkedBodyAtTheLimit checks that a body without a Content-Length is
// read up to the limit, not to its end, and refused with the same words.
func TestPublishStopsAChunkedBodyAtTheLimit(t *testing.T) {
	const limit, size = 2 << 20, 50 << 20
	body := &countingBody{head: multipartHead, size: size}
	code, msg := publishThrough(t, limit, body, -1)
	if code != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413 (%s)", code, msg)
	}
	if body.off > limit+256<<10 {
		t.Errorf("the server read %d bytes past a %d-byte limit", body.off-limit, limit)
	}
	if want := "the upload is over 2 MiB; this registry accepts at most 2 MiB (--max-body)"; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
}

// TestPublishUnderTheLimitIsRead checks the other side of the header check: a declared size
// within the limit goes on to the multipart reader (here refused for its truncated body).
func TestPublishUnderTheLimitIsRead(t *testing.T) {
	body := &countingBody{head: multipartHead, size: 1 << 20}
	code, msg := publishThrough(t, 2<<20, body, 1<<20)
	if code != http.StatusBadRequest || !strings.Contains(msg, "truncated or malformed") {
		t.Errorf("status %d %q, want 400 for the truncated multipart body", code, msg)
	}
	if body.off != 1<<20 {
		t.Errorf("read %d of %d bytes", body.off, 1<<20)
	}
}

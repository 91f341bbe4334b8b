package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A download asking for more ranges than a client needs (thousands fit in the header
// limit, each a read of the blob, a GET on S3) is answered whole; a few ranges are served.
func TestDownloadRangesAreBounded(t *testing.T) {
	e := newEnv(t, "")
	data := pkg(t, "acme-hello", "1.0.0", "Says hello")
	r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", data)
	var pub published
	r.json(t, &pub)
	path := strings.TrimPrefix(pub.PackageURL, e.srv.URL)
	ranges := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf("%d-%d", 2*i, 2*i)
		}
		return "bytes=" + strings.Join(parts, ",")
	}
	if r := e.get(path, "Range", ranges(3)); r.Status != http.StatusPartialContent {
		t.Errorf("3 ranges: %d, want 206", r.Status)
	}
	if r := e.get(path, "Range", ranges(16)); r.Status != http.StatusPartialContent {
		t.Errorf("16 ranges: %d, want 206", r.Status)
	}
	r = e.get(path, "Range", ranges(2000))
	if r.Status != http.StatusOK || !bytes.Equal(r.Body, data) {
		t.Errorf("2000 ranges: %d with %d bytes, want 200 with the whole %d-byte package", r.Status, len(r.Body), len(data))
	}
}

// TestUnknownRangeUnitIsIgnored: a Range in a unit other than bytes is ignored (RFC 9110
// §14.2), on a package and on /index.json: 200 with the whole body, not 416.
func TestUnknownRangeUnitIsIgnored(t *testing.T) {
	e := newEnv(t, "")
	data := pkg(t, "acme-hello", "1.0.0", "Says hello")
	r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", data)
	var pub published
	r.json(t, &pub)
	path := strings.TrimPrefix(pub.PackageURL, e.srv.URL)
	if r := e.get(path, "Range", "items=0-1"); r.Status != http.StatusOK || !bytes.Equal(r.Body, data) {
		t.Errorf("package with Range: items=0-1: %d with %d bytes, want 200 with the whole %d-byte package", r.Status, len(r.Body), len(data))
	}
	whole := e.get("/index.json")
	if r := e.get("/index.json", "Range", "items=0-1"); r.Status != http.StatusOK || !bytes.Equal(r.Body, whole.Body) {
		t.Errorf("/index.json with Range: items=0-1: %d with %d bytes, want 200 with the whole %d bytes", r.Status, len(r.Body), len(whole.Body))
	}
	if r := e.get(path, "Range", "bytes=0-1"); r.Status != http.StatusPartialContent {
		t.Errorf("package with Range: bytes=0-1: %d, want 206", r.Status)
	}
}

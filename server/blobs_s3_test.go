package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/s3blob"
	"github.com/pluginyard/registry/s3blob/s3test"
)

// s3Blobs is a blob store in a fresh bucket of a real S3 server (versitygw on loopback).
func s3Blobs(t *testing.T) *s3blob.Store {
	t.Helper()
	srv := s3test.Start(t)
	srv.SetEnv(t)
	b, err := s3blob.Open(context.Background(), srv.URL(""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDownloadsFromS3 publishes into an S3 bucket and downloads, streamed through the
// registry and, with --blobs-redirect, through a pre-signed URL: either way the whole
// body and a range are the bytes index.json's package_sha256 names, and a whole GET is
// counted once (a range is not, as when serving from a folder).
func TestDownloadsFromS3(t *testing.T) {
	blobs := s3Blobs(t)
	for _, tt := range []struct {
		name     string
		redirect time.Duration
	}{{"streamed", 0}, {"redirected", ingest.DefaultBlobRedirect}} {
		t.Run(tt.name, func(t *testing.T) {
			e := startEnv(t, "", func(c *ingest.Config) { c.Blobs, c.BlobRedirect = blobs, tt.redirect }, nil)
			data := pkg(t, "acme-hello", "1.0.0", "Says hello from "+tt.name)
			e.mustPublish("acme-hello-1.0.0.tar.gz", data)
			want := indexSHA(t, e, "acme-hello")
			if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != want {
				t.Fatalf("index.json package_sha256 %s is not the published bytes'", want)
			}
			path := "/packages/acme-hello/acme-hello-1.0.0.tar.gz"
			whole := download(t, e, path, "", tt.redirect > 0)
			if sum := sha256.Sum256(whole); hex.EncodeToString(sum[:]) != want {
				t.Errorf("downloaded %d bytes hashing to %x, want package_sha256 %s", len(whole), sum, want)
			}
			part := download(t, e, path, "bytes=10-41", tt.redirect > 0)
			if string(part) != string(data[10:42]) {
				t.Errorf("range 10-41: got %d bytes %q, want %q", len(part), part, data[10:42])
			}
			ctx := context.Background()
			if err := e.svc.FlushDownloads(ctx); err != nil {
				t.Fatal(err)
			}
			rel, err := e.st.Release(ctx, "acme-hello", "1.0.0")
			if err != nil || rel.Downloads != 1 {
				t.Errorf("downloads = %d, %v; want 1 (the whole GET, not the range)", rel.Downloads, err)
			}
		})
	}
}

// indexSHA is the package_sha256 index.json lists for id.
func indexSHA(t *testing.T, e *env, id string) string {
	t.Helper()
	var idx struct {
		Plugins []struct {
			ID            string
			PackageSHA256 string `json:"package_sha256"`
		}
	}
	e.get("/index.json").json(t, &idx)
	for _, p := range idx.Plugins {
		if p.ID == id {
			return p.PackageSHA256
		}
	}
	t.Fatalf("index.json does not list %s: %+v", id, idx.Plugins)
	return ""
}

// download GETs path (with a Range header when rng is not ""). Redirected, the registry
// must answer 302 to a pre-signed URL that is not cached, fetched here without the
// registry; streamed, it answers the bytes itself, with the package's ETag.
func download(t *testing.T, e *env, path, rng string, redirected bool) []byte {
	t.Helper()
	var hdr []string
	if rng != "" {
		hdr = []string{"Range", rng}
	}
	r := e.get(path, hdr...) // the harness does not follow redirects
	wantStatus := http.StatusOK
	if rng != "" {
		wantStatus = http.StatusPartialContent
	}
	if !redirected {
		if r.Status != wantStatus || r.Header.Get("ETag") == "" {
			t.Fatalf("GET %s (Range %q): %d, ETag %q; want %d with the package ETag", path, rng, r.Status, r.Header.Get("ETag"), wantStatus)
		}
		return r.Body
	}
	loc := r.Header.Get("Location")
	if r.Status != http.StatusFound || !strings.Contains(loc, "X-Amz-Signature=") || r.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("GET %s: %d, Location %q, Cache-Control %q; want 302 to a pre-signed URL, no-store", path, r.Status, loc, r.Header.Get("Cache-Control"))
	}
	if strings.HasPrefix(loc, e.srv.URL) {
		t.Fatalf("redirected to the registry itself: %s", loc)
	}
	req, err := http.NewRequest(http.MethodGet, loc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != wantStatus {
		t.Fatalf("GET the pre-signed URL (Range %q): %d %v; want %d", rng, res.StatusCode, err, wantStatus)
	}
	return body
}

// TestRedirectRefusesALostBlob: with --blobs-redirect a package whose object is gone from
// the bucket is answered 503 naming it missing, as when streaming, never a redirect to a
// 404, and the answer is not a download.
func TestRedirectRefusesALostBlob(t *testing.T) {
	blobs := s3Blobs(t)
	e := startEnv(t, "", func(c *ingest.Config) { c.Blobs, c.BlobRedirect = blobs, ingest.DefaultBlobRedirect }, nil)
	data := pkg(t, "acme-hello", "1.0.0", "Says hello")
	e.mustPublish("acme-hello-1.0.0.tar.gz", data)
	ctx := context.Background()
	if err := blobs.Remove(ctx, sha(data)); err != nil {
		t.Fatal(err)
	}
	r := e.get("/packages/acme-hello/acme-hello-1.0.0.tar.gz")
	if r.Status != http.StatusServiceUnavailable || !strings.Contains(string(r.Body), "is missing") || r.Header.Get("Location") != "" {
		t.Fatalf("lost blob: %d %s, Location %q; want 503 saying it is missing", r.Status, r.Body, r.Header.Get("Location"))
	}
	if err := e.svc.FlushDownloads(ctx); err != nil {
		t.Fatal(err)
	}
	if rel, err := e.st.Release(ctx, "acme-hello", "1.0.0"); err != nil || rel.Downloads != 0 {
		t.Errorf("downloads = %d, %v; want 0", rel.Downloads, err)
	}
}

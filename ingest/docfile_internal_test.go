package ingest

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
)

// Large documents are compressed at the default level, small ones at the best; both
// decompress to the body.
func TestGzipLevelBySize(t *testing.T) {
	if gzipLevel(gzipLargeMin-1) != GzipLevel || gzipLevel(gzipLargeMin) != gzipLargeLevel || gzipLargeLevel == GzipLevel {
		t.Fatalf("levels: %d below %d bytes, %d from it", gzipLevel(gzipLargeMin-1), gzipLargeMin, gzipLevel(gzipLargeMin))
	}
	body := bytes.Repeat([]byte(`{"id":"acme-hello","version":"1.0.0"},`), gzipLargeMin/30)
	d := newDocument(body, time.Now())
	zr, err := gzip.NewReader(bytes.NewReader(d.Gzip()))
	if err != nil {
		t.Fatal(err)
	}
	if plain, _ := io.ReadAll(zr); !bytes.Equal(plain, body) {
		t.Fatal("the gzip bytes are not the body")
	}
}

// A Document not made by newDocument still answers gzip, and concurrent calls write no
// field of it (go test -race).
func TestGzipOfAZeroDocumentIsRaceFree(t *testing.T) {
	d := Document{Body: index.BodyOf([]byte(`{"schema_version":1,"plugins":[]}`))}
	done := make(chan []byte, 4)
	for range 4 {
		go func() { done <- d.Gzip() }()
	}
	for range 4 {
		zr, err := gzip.NewReader(bytes.NewReader(<-done))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := io.ReadAll(zr); !bytes.Equal(got, d.Body.Bytes()) {
			t.Fatalf("gzip of a zero Document decompresses to %q", got)
		}
	}
	if d.lazy != nil {
		t.Error("Gzip wrote d.lazy of a Document others may be reading")
	}
}

// A data directory from a version that served documents from files holds their
// name-ETag.json and .json.gz files (and a write's .tmp) directly under index/: the first
// build's persisted documents remove them, and leave the last good documents and
// search.sum in place.
func TestOldDocFilesAreRemoved(t *testing.T) {
	dir := t.TempDir()
	st := MustStore(t, dir)
	old := []string{"kandev-0123abcd.json", "kandev-0123abcd.json.gz", "curupira-4567ef01.json",
		"curupira-4567ef01.json.gz", "shard-all.a-89ab.json.gz", "kandev-cdef.json.tmp"}
	docs := filepath.Join(dir, docDir)
	if err := os.MkdirAll(docs, 0o750); err != nil {
		t.Fatal(err)
	}
	for _, name := range old {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(`{"plugins":[]}`), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	svc := MustService(t, st, Config{})
	if err := svc.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	svc.persist.wait()
	entries, err := os.ReadDir(docs)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if diff := cmp.Diff([]string{lastGoodDir, "search.sum"}, left); diff != "" {
		t.Errorf("%s after the first build (-want +got):\n%s", docs, diff)
	}
	if _, err := os.Stat(svc.lastGoodPath(lastGoodMeta)); err != nil {
		t.Errorf("the last good documents: %v", err)
	}
}

package ingest

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"testing"
	"time"
)

// A document's file is written in the background: the first request after a change is
// answered from memory at once, never after a disk write, and a later one finds the file
// holding exactly the body.
func TestBodyFileNeverBlocks(t *testing.T) {
	d := newDocument([]byte(`{"schema_version":1,"plugins":[]}`), time.Now())
	d.lazy.dir, d.lazy.name = t.TempDir(), "kandev"
	d.lazy.born = time.Now().Add(-bodyFileDelay)
	if f := d.BodyFile(); f != "" {
		t.Fatalf("first BodyFile() = %q: the write must not be waited for", f)
	}
	deadline := time.Now().Add(5 * time.Second)
	for d.BodyFile() == "" && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	got, err := os.ReadFile(d.BodyFile())
	if err != nil || !bytes.Equal(got, d.Body) {
		t.Fatalf("the file %q holds %q (%v), want the body", d.BodyFile(), got, err)
	}
}

// A document younger than bodyFileDelay is served from memory and starts no write: under
// back-to-back publishes no superseded document is written to disk.
func TestBodyFileWaitsForAStableDocument(t *testing.T) {
	d := newDocument([]byte(`{"schema_version":1,"plugins":[]}`), time.Now())
	d.lazy.dir, d.lazy.name = t.TempDir(), "kandev"
	for range 3 {
		if f := d.BodyFile(); f != "" || d.lazy.bodyStart.Load() {
			t.Fatalf("BodyFile() of a new document = %q, write started %v: want memory and no write before %v", f, d.lazy.bodyStart.Load(), bodyFileDelay)
		}
	}
	d.lazy.born = time.Now().Add(-bodyFileDelay)
	_ = d.BodyFile()
	if !d.lazy.bodyStart.Load() {
		t.Fatalf("a document %v old started no write", bodyFileDelay)
	}
	for deadline := time.Now().Add(5 * time.Second); !d.lazy.bodyReady.Load() && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond) // the write ends before the temporary directory goes
	}
}

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
	d := Document{Body: []byte(`{"schema_version":1,"plugins":[]}`)}
	done := make(chan []byte, 4)
	for range 4 {
		go func() { done <- d.Gzip() }()
	}
	for range 4 {
		zr, err := gzip.NewReader(bytes.NewReader(<-done))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := io.ReadAll(zr); !bytes.Equal(got, d.Body) {
			t.Fatalf("gzip of a zero Document decompresses to %q", got)
		}
	}
	if d.lazy != nil {
		t.Error("Gzip wrote d.lazy of a Document others may be reading")
	}
}

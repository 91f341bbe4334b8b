package blobtest

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pluginyard/registry/store"
)

func isEOF(err error) bool { return err == io.EOF } //nolint:errorlint // readers return io.EOF itself

// Same bytes twice, from two spool files: one blob, no error, the bytes intact.
func testPutIdempotent(t *testing.T, h Harness) {
	data := Bytes(10_000, 1)
	sha := MustPut(t, h.Blobs, data)
	if sha2 := MustPut(t, h.Blobs, data); sha2 != sha {
		t.Fatalf("second Put: sha %s, want %s", sha2, sha)
	}
	wantList(t, h.Blobs, sha)
	MustRead(t, h.Blobs, sha, data)
	if err := h.Blobs.Check(context.Background(), sha, int64(len(data))); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

// A digest that is not one, or a spool file of another size than told, stores nothing.
func testPutRefuses(t *testing.T, h Harness) {
	ctx := context.Background()
	data := Bytes(100, 2)
	for _, bad := range []string{"", "abc", strings.ToUpper(SHA(data)), "../" + SHA(data)[3:]} {
		if err := h.Blobs.Put(ctx, bad, int64(len(data)), Spool(t, data)); err == nil {
			t.Errorf("Put(sha %q) = nil, want an error", bad)
		}
	}
	for _, told := range []int64{int64(len(data)) + 1, int64(len(data)) - 1} {
		err := h.Blobs.Put(ctx, SHA(data), told, Spool(t, data))
		if err == nil || !strings.Contains(err.Error(), strconv.Itoa(len(data))) || !strings.Contains(err.Error(), strconv.FormatInt(told, 10)) {
			t.Errorf("Put of a %d-byte spool file told %d bytes: %v; want an error naming both sizes", len(data), told, err)
		}
	}
	wantList(t, h.Blobs)
}

// Racing Puts of one blob (the conditional create on S3): all succeed, one blob, intact.
func testConcurrentPuts(t *testing.T, h Harness) {
	data := Bytes(256<<10, 3)
	sha := SHA(data)
	const n = 8
	srcs := make([]string, n)
	for i := range srcs {
		srcs[i] = Spool(t, data)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = h.Blobs.Put(context.Background(), sha, int64(len(data)), srcs[i]) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Put #%d: %v", i, err)
		}
	}
	wantList(t, h.Blobs, sha)
	if err := h.Blobs.Check(context.Background(), sha, int64(len(data))); err != nil {
		t.Fatalf("Check after racing Puts: %v", err)
	}
}

func testPutBytes(t *testing.T, h Harness) {
	ctx := context.Background()
	data := Bytes(5000, 4)
	sha, err := h.Blobs.PutBytes(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	if sha != SHA(data) {
		t.Fatalf("PutBytes sha = %s, want the sha256 of the bytes, %s", sha, SHA(data))
	}
	if again, err := h.Blobs.PutBytes(ctx, data); err != nil || again != sha {
		t.Fatalf("PutBytes again = %s, %v; want %s, nil", again, err, sha)
	}
	empty, err := h.Blobs.PutBytes(ctx, nil)
	if err != nil {
		t.Fatalf("PutBytes(empty): %v", err)
	}
	wantList(t, h.Blobs, sha, empty)
	MustRead(t, h.Blobs, sha, data)
	MustRead(t, h.Blobs, empty, nil)
}

// A blob present with the recorded size is kept, not written again (on S3 the conditional
// create refuses the second PUT): same-size damage stays for Check to find.
func testPutKeeps(t *testing.T, h Harness) {
	data := Bytes(3000, 12)
	sha := MustPut(t, h.Blobs, data)
	flipped := slices.Clone(data)
	flipped[0] ^= 0x80
	h.Overwrite(t, sha, flipped)
	MustPut(t, h.Blobs, data)
	wantErr(t, "Check after a second Put", h.Blobs.Check(context.Background(), sha, int64(len(data))), store.ErrBlobCorrupt, sha)
	wantList(t, h.Blobs, sha)
}

// A blob of the wrong size is other bytes; a Put of the right ones replaces it.
func testPutRepairs(t *testing.T, h Harness) {
	data := Bytes(3000, 5)
	sha := MustPut(t, h.Blobs, data)
	h.Overwrite(t, sha, data[:100])
	MustPut(t, h.Blobs, data)
	if err := h.Blobs.Check(context.Background(), sha, int64(len(data))); err != nil {
		t.Fatalf("Check after the repairing Put: %v", err)
	}
}

func testPutCancelled(t *testing.T, h Harness) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	data := Bytes(1000, 6)
	if err := h.Blobs.Put(ctx, SHA(data), int64(len(data)), Spool(t, data)); err == nil {
		t.Fatal("Put with a cancelled context = nil, want an error")
	}
	if _, err := h.Blobs.PutBytes(ctx, data); err == nil {
		t.Fatal("PutBytes with a cancelled context = nil, want an error")
	}
	wantList(t, h.Blobs)
}

// ReadAt and Seek+Read at several offsets, the last byte, and past the end.
func testRanges(t *testing.T, h Harness) {
	data := Bytes(300_001, 7)
	size := int64(len(data))
	sha := MustPut(t, h.Blobs, data)
	b, err := h.Blobs.Open(context.Background(), sha, size)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, r := range []struct{ off, n int64 }{{0, 10}, {1, 4096}, {size / 2, 70_000}, {size - 1, 1}, {size - 5, 5}, {4, 0}} {
		checkReadAt(t, b, data, r.off, r.n)
		checkSeekRead(t, b, data, r.off, r.n)
	}
	checkReadAtPastEnd(t, b, data)
	checkSeekEnd(t, b, data)
	checkSeekPastEnd(t, b, size)
	// Ranged reads do not disturb a sequential one from the start.
	if _, err := b.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(b); err != nil || !slices.Equal(got, data) {
		t.Fatalf("read after ranges: %d bytes, %v; want the %d stored", len(got), err, len(data))
	}
}

func checkReadAt(t *testing.T, b store.Blob, data []byte, off, n int64) {
	t.Helper()
	p := make([]byte, n)
	got, err := b.ReadAt(p, off)
	if int64(got) != n || (err != nil && !isEOF(err)) {
		t.Fatalf("ReadAt(%d bytes at %d) = %d, %v", n, off, got, err)
	}
	if !slices.Equal(p, data[off:off+n]) {
		t.Fatalf("ReadAt(%d bytes at %d): other bytes than stored", n, off)
	}
}

func checkSeekRead(t *testing.T, b store.Blob, data []byte, off, n int64) {
	t.Helper()
	pos, err := b.Seek(off, io.SeekStart)
	if err != nil || pos != off {
		t.Fatalf("Seek(%d) = %d, %v", off, pos, err)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(b, p); err != nil {
		t.Fatalf("read %d bytes after Seek(%d): %v", n, off, err)
	}
	if !slices.Equal(p, data[off:off+n]) {
		t.Fatalf("read %d bytes after Seek(%d): other bytes than stored", n, off)
	}
}

// A ReadAt that crosses the end gives the bytes up to it and io.EOF; one at or past the end
// gives none.
func checkReadAtPastEnd(t *testing.T, b store.Blob, data []byte) {
	t.Helper()
	size := int64(len(data))
	p := make([]byte, 10)
	n, err := b.ReadAt(p, size-3)
	if n != 3 || !isEOF(err) || !slices.Equal(p[:3], data[size-3:]) {
		t.Fatalf("ReadAt(10 bytes at size-3) = %d, %v; want 3, io.EOF", n, err)
	}
	for _, off := range []int64{size, size + 100} {
		if n, err := b.ReadAt(p, off); n != 0 || !isEOF(err) {
			t.Fatalf("ReadAt(at %d, size %d) = %d, %v; want 0, io.EOF", off, size, n, err)
		}
	}
}

// Seek from the end finds the size (http.ServeContent's way) and the last byte.
func checkSeekEnd(t *testing.T, b store.Blob, data []byte) {
	t.Helper()
	size := int64(len(data))
	if end, err := b.Seek(0, io.SeekEnd); err != nil || end != size {
		t.Fatalf("Seek(0, end) = %d, %v; want %d", end, err, size)
	}
	if pos, err := b.Seek(-1, io.SeekEnd); err != nil || pos != size-1 {
		t.Fatalf("Seek(-1, end) = %d, %v; want %d", pos, err, size-1)
	}
	p := make([]byte, 4)
	n, err := b.Read(p)
	if n != 1 || p[0] != data[size-1] || (err != nil && !isEOF(err)) {
		t.Fatalf("read at the last byte = %d, %v; want 1 byte %#x", n, err, data[size-1])
	}
	if n, err := b.Read(p); n != 0 || !isEOF(err) {
		t.Fatalf("read at the end = %d, %v; want 0, io.EOF", n, err)
	}
}

func checkSeekPastEnd(t *testing.T, b store.Blob, size int64) {
	t.Helper()
	if _, err := b.Seek(-1, io.SeekStart); err == nil {
		t.Fatal("Seek(-1) = nil error, want one")
	}
	pos, err := b.Seek(size+10, io.SeekStart)
	if err != nil {
		return // refusing a seek past the end is fine
	}
	if pos != size+10 {
		t.Fatalf("Seek(size+10) = %d, want %d", pos, size+10)
	}
	if n, err := b.Read(make([]byte, 4)); n != 0 || !isEOF(err) {
		t.Fatalf("read past the end = %d, %v; want 0, io.EOF", n, err)
	}
}

func testMissing(t *testing.T, h Harness) {
	ctx := context.Background()
	sha := SHA([]byte("never stored"))
	b, err := h.Blobs.Open(ctx, sha, 12)
	if b != nil {
		_ = b.Close()
	}
	wantErr(t, "Open", err, store.ErrBlobMissing, sha)
	wantErr(t, "Stat", h.Blobs.Stat(ctx, sha, 12), store.ErrBlobMissing, sha)
	wantErr(t, "Check", h.Blobs.Check(ctx, sha, 12), store.ErrBlobMissing, sha)
}

// Info gives the stored size, whatever is recorded, and when it was stored.
func testInfo(t *testing.T, h Harness) {
	ctx := context.Background()
	before := time.Now().Add(-time.Minute) // slack for S3's whole seconds and clock skew
	data := Bytes(1234, 13)
	sha := MustPut(t, h.Blobs, data)
	h.Overwrite(t, sha, data[:1000])
	info, err := h.Blobs.Info(ctx, sha)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != 1000 || info.Modified.Before(before) || info.Modified.After(time.Now().Add(time.Minute)) {
		t.Fatalf("Info = %+v; want size 1000 (what is stored) and a time about now", info)
	}
	missing := SHA([]byte("never stored"))
	_, err = h.Blobs.Info(ctx, missing)
	wantErr(t, "Info of a missing blob", err, store.ErrBlobMissing, missing)
}

// A blob of another size than recorded is never handed out.
func testCorruptSize(t *testing.T, h Harness) {
	ctx := context.Background()
	data := Bytes(2000, 8)
	sha := MustPut(t, h.Blobs, data)
	size := int64(len(data))
	if err := h.Blobs.Stat(ctx, sha, size+1); err == nil {
		t.Fatal("Stat with a recorded size one more than stored = nil, want ErrBlobCorrupt")
	}
	h.Overwrite(t, sha, data[:1500])
	b, err := h.Blobs.Open(ctx, sha, size)
	if b != nil {
		_ = b.Close()
	}
	wantErr(t, "Open", err, store.ErrBlobCorrupt, sha)
	wantErr(t, "Stat", h.Blobs.Stat(ctx, sha, size), store.ErrBlobCorrupt, sha)
	wantErr(t, "Check", h.Blobs.Check(ctx, sha, size), store.ErrBlobCorrupt, sha)
}

// Same size, other bytes: Open and Stat cannot tell; Check's re-hash does.
func testCorruptSameSize(t *testing.T, h Harness) {
	ctx := context.Background()
	data := Bytes(2000, 9)
	sha := MustPut(t, h.Blobs, data)
	size := int64(len(data))
	flipped := slices.Clone(data)
	flipped[1000] ^= 0x01
	h.Overwrite(t, sha, flipped)
	if err := h.Blobs.Stat(ctx, sha, size); err != nil {
		t.Fatalf("Stat of a same-size damaged blob: %v, want nil (only Check re-hashes)", err)
	}
	wantErr(t, "Check", h.Blobs.Check(ctx, sha, size), store.ErrBlobCorrupt, sha)
}

func testRemove(t *testing.T, h Harness) {
	ctx := context.Background()
	keep := MustPut(t, h.Blobs, Bytes(100, 10))
	data := Bytes(100, 11)
	sha := MustPut(t, h.Blobs, data)
	if err := h.Blobs.Remove(ctx, sha); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "Stat after Remove", h.Blobs.Stat(ctx, sha, 100), store.ErrBlobMissing, sha)
	if err := h.Blobs.Remove(ctx, sha); err != nil {
		t.Fatalf("Remove of a removed blob: %v, want nil", err)
	}
	if err := h.Blobs.Remove(ctx, "not-a-digest"); err != nil {
		t.Fatalf("Remove(not a digest): %v, want nil", err)
	}
	wantList(t, h.Blobs, keep)
}

func testList(t *testing.T, h Harness) {
	wantList(t, h.Blobs)
	var want []string
	for i := range 5 {
		want = append(want, MustPut(t, h.Blobs, Bytes(50+i, uint64(20+i))))
	}
	wantList(t, h.Blobs, want...)
}

func presigner(t *testing.T, h Harness) Presigner {
	t.Helper()
	if !h.Presign {
		t.Skip("this backend hands out no pre-signed URLs")
	}
	p, ok := h.Blobs.(Presigner)
	if !ok {
		t.Fatalf("%T does not implement PresignGet", h.Blobs)
	}
	return p
}

// A pre-signed URL serves the bytes to a client without credentials, named as asked.
func testPresign(t *testing.T, h Harness) {
	p := presigner(t, h)
	data := Bytes(4000, 30)
	sha := MustPut(t, h.Blobs, data)
	u, err := p.PresignGet(context.Background(), sha, time.Minute, "my-plugin-1.2.0.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	status, header, body := get(t, u)
	if status != http.StatusOK || !slices.Equal(body, data) {
		t.Fatalf("GET pre-signed URL: %d, %d bytes; want 200 and the %d stored", status, len(body), len(data))
	}
	if cd := header.Get("Content-Disposition"); !strings.Contains(cd, "my-plugin-1.2.0.tar.gz") {
		t.Errorf("Content-Disposition %q does not name the file", cd)
	}
	for _, ttl := range []time.Duration{0, 8 * 24 * time.Hour} {
		if _, err := p.PresignGet(context.Background(), sha, ttl, ""); err == nil || !strings.Contains(err.Error(), "168h0m0s") {
			t.Errorf("PresignGet for %s: %v; want a refusal naming the 7-day (168h0m0s) limit", ttl, err)
		}
	}
}

// An expired pre-signed URL is refused by the server.
func testPresignExpired(t *testing.T, h Harness) {
	p := presigner(t, h)
	data := Bytes(4000, 31)
	sha := MustPut(t, h.Blobs, data)
	u, err := p.PresignGet(context.Background(), sha, time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond) // past the 1 s lifetime (S3 counts whole seconds)
	status, _, body := get(t, u)
	if status != http.StatusForbidden || slices.Equal(body, data) {
		t.Fatalf("GET of an expired pre-signed URL: %d, %d bytes; want 403 without the blob", status, len(body))
	}
}

func get(t *testing.T, u string) (int, http.Header, []byte) {
	t.Helper()
	resp, err := http.Get(u) //nolint:gosec,noctx // the URL is the store's own
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, body
}

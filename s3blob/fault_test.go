package s3blob_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/pluginyard/registry/s3blob"
	"github.com/pluginyard/registry/s3blob/s3test"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/blobtest"
)

// With the server gone every call fails with an error wrapping store.ErrUnavailable, and
// once it is back the same Store works again, without reopening.
func TestUnreachableBucketIsUnavailable(t *testing.T) {
	srv := s3test.Start(t)
	s := mustOpen(t, srv, "")
	ctx := context.Background()
	data := blobtest.Bytes(1000, 40)
	sha := blobtest.MustPut(t, s, data)
	size := int64(len(data))
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	other := blobtest.Bytes(1000, 41)
	calls := map[string]func() error{
		"Put": func() error { return s.Put(ctx, blobtest.SHA(other), size, blobtest.Spool(t, other)) },
		"PutBytes": func() error {
			_, err := s.PutBytes(ctx, other)
			return err
		},
		"Open": func() error {
			b, err := s.Open(ctx, sha, size)
			if b != nil {
				_ = b.Close()
			}
			return err
		},
		"Stat":   func() error { return s.Stat(ctx, sha, size) },
		"Check":  func() error { return s.Check(ctx, sha, size) },
		"Remove": func() error { return s.Remove(ctx, sha) },
		"List": func() error {
			_, err := s.List(ctx)
			return err
		},
		"s3blob.Open": func() error {
			_, err := s3blob.Open(ctx, srv.URL(""))
			return err
		},
	}
	for name, call := range calls {
		start := time.Now()
		err := call()
		t.Logf("%s with the server stopped: %s: %v", name, time.Since(start).Round(time.Millisecond), err)
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s: err = %v, want it to wrap store.ErrUnavailable", name, err)
		}
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	blobtest.MustRead(t, s, sha, data)
	blobtest.MustPut(t, s, other)
}

// A read that loses the server midway fails with ErrUnavailable, not a short blob.
func TestReadCutMidwayIsUnavailable(t *testing.T) {
	srv := s3test.Start(t)
	s := mustOpen(t, srv, "")
	data := blobtest.Bytes(8<<20, 42)
	sha := blobtest.MustPut(t, s, data)
	b, err := s.Open(context.Background(), sha, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := io.ReadFull(b, make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	// Past what the connection had buffered, the next ranged GET finds no server.
	_, err = b.ReadAt(make([]byte, 1000), int64(len(data))-1000)
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("ReadAt after the server stopped: err = %v, want it to wrap store.ErrUnavailable", err)
	}
}

// A Put cut off halfway through its upload leaves no object under the sha: S3 stores a
// PUT whole or not at all, and Put never uses a multipart upload.
func TestPutInterruptedMidUploadStoresNothing(t *testing.T) {
	srv := s3test.Start(t)
	data := blobtest.Bytes(48<<20, 43)
	sha := blobtest.SHA(data)
	src := blobtest.Spool(t, data)
	// The store reaches the server through a proxy that stops the server once half the
	// bytes have gone through.
	p := startProxy(t, srv.Endpoint, int64(len(data)/2), func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
	})
	srv.SetEnv(t)
	u := "s3://" + srv.Bucket + "?insecure=1&region=us-east-1&endpoint=" + p.addr
	s, err := s3blob.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = s.Put(context.Background(), sha, int64(len(data)), src)
	t.Logf("interrupted Put returned after %s: %v", time.Since(start).Round(time.Millisecond), err)
	if !p.tripped.Load() {
		t.Fatal("the proxy never saw half the upload: the test did not interrupt anything")
	}
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("interrupted Put: err = %v, want it to wrap store.ErrUnavailable", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	direct := mustOpen(t, srv, "")
	if err := direct.Stat(context.Background(), sha, int64(len(data))); !errors.Is(err, store.ErrBlobMissing) {
		t.Fatalf("Stat after the interrupted Put: %v, want ErrBlobMissing (nothing half-stored)", err)
	}
	if got, err := direct.List(context.Background()); err != nil || len(got) != 0 {
		t.Fatalf("List after the interrupted Put = %v, %v; want nothing", got, err)
	}
	// And it can be stored again.
	if err := direct.Put(context.Background(), sha, int64(len(data)), src); err != nil {
		t.Fatal(err)
	}
	if err := direct.Check(context.Background(), sha, int64(len(data))); err != nil {
		t.Fatal(err)
	}
}

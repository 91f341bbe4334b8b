package s3blob_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pluginyard/registry/s3blob"
	"github.com/pluginyard/registry/s3blob/s3test"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/blobtest"
)

// Open finds a wrong bucket or wrong credentials at start, not at the first publish.
func TestOpenRefusesWhatCannotWork(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	missing := strings.Replace(srv.URL(""), srv.Bucket, "no-such-bucket", 1)
	_, err := s3blob.OpenKeys(ctx, missing, srv.AccessKey, srv.SecretKey)
	if err == nil || !strings.Contains(err.Error(), `bucket "no-such-bucket" does not exist`) || errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Open of a missing bucket: %v; want it named as missing (not unavailable)", err)
	}
	_, err = s3blob.OpenKeys(ctx, srv.URL(""), srv.AccessKey, "wrong-secret")
	if err == nil || !strings.Contains(err.Error(), "access denied") || !strings.Contains(err.Error(), "AWS_SECRET_ACCESS_KEY") {
		t.Errorf("Open with a wrong secret: %v; want access denied naming the variables", err)
	}
	if _, err := s3blob.OpenKeys(ctx, "s3://blobs?insecure=maybe", srv.AccessKey, srv.SecretKey); err == nil || !strings.Contains(err.Error(), "insecure") {
		t.Errorf("Open of a bad URL: %v; want the URL's error", err)
	}
}

// A prefix is a separate blob store in the same bucket.
func TestPrefixesAreSeparate(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	a := mustOpen(t, srv, "a")
	b := mustOpen(t, srv, "a/b")
	root := mustOpen(t, srv, "")
	// Under root's own folder, sha256/: listed by root only if named as root's blobs.
	nested := mustOpen(t, srv, "sha256")
	if _, err := nested.PutBytes(ctx, []byte("in sha256/sha256/")); err != nil {
		t.Fatal(err)
	}
	sha, err := a.PutBytes(ctx, []byte("in a"))
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Key(sha); got != "a/sha256/"+sha[:2]+"/"+sha {
		t.Errorf("Key = %q, want a/sha256/%s/%s", got, sha[:2], sha)
	}
	for name, s := range map[string]*s3blob.Store{"a/b": b, "root": root} {
		if got, err := s.List(ctx); err != nil || len(got) != 0 {
			t.Errorf("List of prefix %s = %v, %v; want nothing (the blobs are under a/ and sha256/)", name, got, err)
		}
		if err := s.Stat(ctx, sha, 4); !errors.Is(err, store.ErrBlobMissing) {
			t.Errorf("Stat in prefix %s: %v, want ErrBlobMissing", name, err)
		}
	}
}

// A Put whose bytes do not hash to the sha it names is refused by the server, which
// checks the upload's x-amz-checksum-sha256: nothing is stored under a wrong name.
func TestPutOfOtherBytesIsRefused(t *testing.T) {
	srv := s3test.Start(t)
	s := mustOpen(t, srv, "")
	data := blobtest.Bytes(5000, 60)
	wrong := blobtest.SHA([]byte("other bytes"))
	err := s.Put(context.Background(), wrong, int64(len(data)), blobtest.Spool(t, data))
	if err == nil {
		t.Fatal("Put of bytes under another sha = nil, want the server's refusal")
	}
	t.Logf("refused: %v", err)
	if err := s.Stat(context.Background(), wrong, int64(len(data))); !errors.Is(err, store.ErrBlobMissing) {
		t.Fatalf("Stat after the refused Put: %v, want ErrBlobMissing", err)
	}
}

// A blob larger than minio's multipart threshold (16 MiB) still goes up in one conditional
// PUT: a second Put keeps what is there, and the server verifies the whole object's sha256.
func TestLargePutIsOneConditionalPUT(t *testing.T) {
	srv := s3test.Start(t)
	s := mustOpen(t, srv, "")
	data := blobtest.Bytes(20<<20, 61)
	sha := blobtest.MustPut(t, s, data)
	flipped := slices.Clone(data)
	flipped[len(flipped)-1] ^= 0x01
	overwrite(srv, s)(t, sha, flipped)
	blobtest.MustPut(t, s, data)
	if err := s.Check(context.Background(), sha, int64(len(data))); !errors.Is(err, store.ErrBlobCorrupt) {
		t.Fatalf("Check after a second Put over same-size damage: %v, want ErrBlobCorrupt (the object kept)", err)
	}
	wrong := blobtest.SHA([]byte("not these bytes"))
	if err := s.Put(context.Background(), wrong, int64(len(data)), blobtest.Spool(t, data)); err == nil {
		t.Fatal("Put of 20 MiB under another sha = nil, want the server's refusal")
	}
}

package s3blob_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

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

// A Put that finds the blob absent, then loses the create to another writer, keeps the
// winner's object (If-None-Match: *) and succeeds, also past minio's 16 MiB multipart
// threshold.
func TestPutLosingARaceKeepsTheWinner(t *testing.T) {
	srv := s3test.Start(t)
	for name, size := range map[string]int{"100KiB": 100 << 10, "32MiB": 32 << 20} {
		t.Run(name, func(t *testing.T) {
			s := mustOpen(t, srv, "race-"+name)
			loseTheCreate(t, srv, s, s, size)
		})
	}
}

// A server refusing a conditional PUT of a large body may answer 412 before reading it and
// reset the connection, so that the client sees the reset, not the 412 (versitygw does, at
// random): Put still keeps the winner's object and succeeds. The proxy makes every 412 a
// reset.
func TestPutLosingARaceToAResetConnection(t *testing.T) {
	srv := s3test.Start(t)
	p := startProxy(t, srv.Endpoint, 1<<62, nil)
	p.reset412 = true
	srv.SetEnv(t)
	s, err := s3blob.Open(context.Background(), "s3://"+srv.Bucket+"?insecure=1&region=us-east-1&endpoint="+p.addr)
	if err != nil {
		t.Fatal(err)
	}
	loseTheCreate(t, srv, s, mustOpen(t, srv, ""), 1<<20)
	if p.resets.Load() == 0 {
		t.Fatal("no 412 went through the proxy: the test reset nothing")
	}
}

// loseTheCreate has another writer create the blob (same size, other bytes) between s's
// finding it absent and its PUT, then checks through direct that s kept the winner's.
func loseTheCreate(t *testing.T, srv *s3test.Server, s, direct *s3blob.Store, size int) {
	t.Helper()
	data := blobtest.Bytes(size, 61)
	winner := slices.Clone(data)
	winner[len(winner)-1] ^= 0x01 // same size, other bytes: tells whose object stayed
	s3blob.SetBeforeUpload(s, func(sha string) { overwrite(srv, direct)(t, sha, winner) })
	sha := blobtest.MustPut(t, s, data)
	if err := direct.Check(context.Background(), sha, int64(size)); !errors.Is(err, store.ErrBlobCorrupt) {
		t.Fatalf("Check after losing the create: %v, want ErrBlobCorrupt (the winner's object kept)", err)
	}
	if got, err := direct.List(context.Background()); err != nil || !slices.Equal(got, []string{sha}) {
		t.Fatalf("List = %v, %v; want the one blob", got, err)
	}
}

// A large blob goes up in one PUT (an ETag without a multipart "-N" suffix), whose
// whole-object sha256 the server verifies.
func TestLargePutIsOneVerifiedPUT(t *testing.T) {
	srv := s3test.Start(t)
	s := mustOpen(t, srv, "")
	data := blobtest.Bytes(20<<20, 62)
	sha := blobtest.MustPut(t, s, data)
	info, err := srv.Client().StatObject(context.Background(), srv.Bucket, s.Key(sha), minio.StatObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(info.ETag, "-") {
		t.Errorf("ETag %q is a multipart upload's: want one PUT", info.ETag)
	}
	wrong := blobtest.SHA([]byte("not these bytes"))
	if err := s.Put(context.Background(), wrong, int64(len(data)), blobtest.Spool(t, data)); err == nil {
		t.Fatal("Put of 20 MiB under another sha = nil, want the server's refusal")
	}
	if err := s.Stat(context.Background(), wrong, int64(len(data))); !errors.Is(err, store.ErrBlobMissing) {
		t.Fatalf("Stat after the refused Put: %v, want ErrBlobMissing", err)
	}
}

// A Put under a name that is no sha256 digest is refused before anything is sent: the
// bucket stays empty, also of objects List would not show.
func TestPutOfABadDigestStoresNothing(t *testing.T) {
	srv := s3test.Start(t)
	s := mustOpen(t, srv, "")
	data := blobtest.Bytes(100, 63)
	for _, bad := range []string{strings.ToUpper(blobtest.SHA(data)), "../" + blobtest.SHA(data)[3:], "abc"} {
		if err := s.Put(context.Background(), bad, int64(len(data)), blobtest.Spool(t, data)); err == nil {
			t.Errorf("Put(sha %q) = nil, want an error", bad)
		}
	}
	for obj := range srv.Client().ListObjects(context.Background(), srv.Bucket, minio.ListObjectsOptions{Recursive: true}) {
		t.Errorf("object %q stored (err %v)", obj.Key, obj.Err)
	}
}

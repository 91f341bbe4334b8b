package s3blob_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/pluginyard/registry/s3blob"
	"github.com/pluginyard/registry/s3blob/s3test"
	"github.com/pluginyard/registry/store/blobtest"
)

// TestConformance runs the blob contract's suite on a real S3 server (versitygw), each
// subtest in a fresh prefix of one bucket.
func TestConformance(t *testing.T) {
	srv := s3test.Start(t)
	blobtest.Run(t, func(t *testing.T) blobtest.Harness {
		s := mustOpen(t, srv, "conformance/"+randomHex(t))
		return blobtest.Harness{
			Blobs:     s,
			Overwrite: overwrite(srv, s),
			Presign:   true,
		}
	})
}

// mustOpen opens the server's bucket under prefix through Open's environment chain.
func mustOpen(t *testing.T, srv *s3test.Server, prefix string) *s3blob.Store {
	t.Helper()
	srv.SetEnv(t)
	s, err := s3blob.Open(context.Background(), srv.URL(prefix))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// overwrite writes data over blob sha's object directly, past the store.
func overwrite(srv *s3test.Server, s *s3blob.Store) func(tb testing.TB, sha string, data []byte) {
	return func(tb testing.TB, sha string, data []byte) {
		tb.Helper()
		_, err := srv.Client().PutObject(context.Background(), srv.Bucket, s.Key(sha), bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
		if err != nil {
			tb.Fatal(err)
		}
	}
}

func randomHex(tb testing.TB) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	return hex.EncodeToString(b)
}

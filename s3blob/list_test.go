package s3blob_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/pluginyard/registry/s3blob/s3test"
)

// The largest listing a sweep or fsck reads: more objects than one ListObjectsV2 page
// (1000 keys) holds, among them keys under the prefix that are not named as blobs (another
// shard, a longer path, no digest), which List must leave out.
func TestListCrossesPagesAndSkipsForeignKeys(t *testing.T) {
	srv := s3test.Start(t)
	s := mustOpen(t, srv, "list/"+randomHex(t))
	ctx := context.Background()
	const n = 1001
	var want []string
	keys := map[string]bool{}
	for i := range n {
		sum := sha256.Sum256(fmt.Appendf(nil, "blob %d", i))
		sha := hex.EncodeToString(sum[:])
		want = append(want, sha)
		keys[s.Key(sha)] = true
	}
	prefix := strings.TrimSuffix(s.Key(want[0]), want[0][:2]+"/"+want[0])
	foreign := []string{
		prefix + "zz/" + want[0],                    // the wrong shard
		prefix + want[1][:2] + "/deeper/" + want[1], // a longer path
		prefix + want[3][:2] + "/not-a-digest",      // no digest
	}
	for _, k := range foreign {
		keys[k] = true
	}
	if err := putAll(ctx, srv, keys); err != nil {
		t.Fatal(err)
	}
	got, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("List returned %d digests, want the %d blobs and none of the foreign keys %q", len(got), len(want), foreign)
	}
}

// putAll writes a one-byte object at each key, eight at a time.
func putAll(ctx context.Context, srv *s3test.Server, keys map[string]bool) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(keys))
	sem := make(chan struct{}, 8)
	for k := range keys {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			_, err := srv.Client().PutObject(ctx, srv.Bucket, k, strings.NewReader("x"), 1, minio.PutObjectOptions{})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

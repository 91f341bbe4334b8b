package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pluginyard/registry/s3blob"
	"github.com/pluginyard/registry/s3blob/s3test"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/blobtest"
)

// inBackends opens, for a store, its own folder and a fresh S3 prefix holding the same
// recorded blobs.
var inBackends = map[string]func(t *testing.T, s *store.Store) blobtest.Backend{
	"folder": func(_ *testing.T, s *store.Store) blobtest.Backend { return s.Blobs.Folder() },
	"s3": func(t *testing.T, s *store.Store) blobtest.Backend {
		srv := s3test.Start(t)
		b, err := s3blob.OpenKeys(context.Background(), srv.URL("gc"), srv.AccessKey, srv.SecretKey)
		if err != nil {
			t.Fatal(err)
		}
		return b
	},
}

// GC removes only blobs no row records and older than the minimum age: a younger one may
// be another replica's publish between its upload and its commit.
func TestCollectGarbageInSparesRecordedAndYoungBlobs(t *testing.T) {
	ctx := context.Background()
	for name, open := range inBackends {
		t.Run(name, func(t *testing.T) {
			s := MustOpen(t)
			b := open(t, s)
			data := []byte("a published package")
			rel := mustPublished(t, s, "kept", "1.0.0", data, nil)
			if _, err := b.PutBytes(ctx, data); err != nil {
				t.Fatal(err)
			}
			orphan, err := b.PutBytes(ctx, []byte("bytes no release uses"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.CollectGarbageIn(ctx, b, 0); err == nil {
				t.Error("CollectGarbageIn with minimum age 0 = nil error, want a refusal")
			}
			if n, err := s.CollectGarbageIn(ctx, b, time.Hour); err != nil || n != 0 {
				t.Fatalf("gc with a 1h minimum age = %d, %v; want 0 (the orphan is young)", n, err)
			}
			time.Sleep(1100 * time.Millisecond) // S3 records whole seconds
			if n, err := s.CollectGarbageIn(ctx, b, time.Millisecond); err != nil || n != 1 {
				t.Fatalf("gc with a 1ms minimum age = %d, %v; want 1", n, err)
			}
			got, err := b.List(ctx)
			if err != nil || !slices.Equal(got, []string{rel.SHA256}) {
				t.Fatalf("after gc: %v, %v; want only the recorded %s (orphan %s removed)", got, err, rel.SHA256, orphan)
			}
		})
	}
}

// fsck over a bucket reports what it reports over the folder, and an unreachable bucket
// ends the check with ErrUnavailable instead of calling every blob unreadable.
func TestCheckBlobsInABucket(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	b, err := s3blob.OpenKeys(ctx, srv.URL(""), srv.AccessKey, srv.SecretKey)
	if err != nil {
		t.Fatal(err)
	}
	s := MustOpen(t)
	whole := []byte("package whole")
	mustPublished(t, s, "whole", "1.0.0", whole, nil)
	lost := mustPublished(t, s, "lost", "1.0.0", []byte("package never uploaded"), nil)
	if _, err := b.PutBytes(ctx, whole); err != nil {
		t.Fatal(err)
	}
	stray := []byte("in the bucket only")
	orphan, err := b.PutBytes(ctx, stray)
	if err != nil {
		t.Fatal(err)
	}
	probs, err := s.CheckBlobsIn(ctx, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Kind, SHA256 string
		Size         int64
	}
	var gotProbs []got
	for _, p := range probs {
		gotProbs = append(gotProbs, got{p.Kind, p.SHA256, p.Size})
	}
	want := []got{{store.BlobMissing, lost.SHA256, lost.Size}, {store.BlobOrphan, orphan, int64(len(stray))}}
	slices.SortFunc(want, func(a, b got) int { return strings.Compare(a.SHA256, b.SHA256) })
	if !slices.Equal(want, gotProbs) {
		t.Fatalf("problems = %+v, want %+v", gotProbs, want)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if probs, err := s.CheckBlobsIn(ctx, b, nil); !errors.Is(err, store.ErrUnavailable) || len(probs) != 0 {
		t.Fatalf("check with the bucket unreachable = %+v, %v; want no verdicts and an error wrapping ErrUnavailable", probs, err)
	}
}

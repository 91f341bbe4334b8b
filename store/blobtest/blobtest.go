// Package blobtest is the conformance suite of the blob contract: every blob behaviour the
// registry relies on is one subtest, run against each backend (the local folder in package
// store, S3 in package s3blob).
package blobtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// Backend is the blob contract (what ingest declares as its Blobs), with Info, which
// garbage collection and fsck over any backend need (store.BlobSweeper, BlobChecker).
type Backend interface {
	Put(ctx context.Context, sha string, size int64, src string) error
	PutBytes(ctx context.Context, data []byte) (string, error)
	Open(ctx context.Context, sha string, size int64) (store.Blob, error)
	Stat(ctx context.Context, sha string, size int64) error
	Info(ctx context.Context, sha string) (store.BlobInfo, error)
	Check(ctx context.Context, sha string, size int64) error
	Remove(ctx context.Context, sha string) error
	List(ctx context.Context) ([]string, error)
}

// Presigner is what a backend that can hand out direct download URLs adds (S3).
type Presigner interface {
	PresignGet(ctx context.Context, sha string, ttl time.Duration, filename string) (string, error)
}

// Harness is one fresh, empty blob store and the hooks the suite needs behind it.
type Harness struct {
	Blobs Backend
	// Overwrite replaces the stored bytes of blob sha with data, past the backend (as a
	// failing disk or a careless operator would): how the suite damages a blob.
	Overwrite func(tb testing.TB, sha string, data []byte)
	// Presign says the backend must implement Presigner; the presign subtests run only then.
	Presign bool
}

// Run runs every subtest, each on a Harness from open.
func Run(t *testing.T, open func(t *testing.T) Harness) {
	tests := []struct {
		name string
		fn   func(t *testing.T, h Harness)
	}{
		{"PutIsContentAddressedAndIdempotent", testPutIdempotent},
		{"PutRefusesABadDigestOrSize", testPutRefuses},
		{"ConcurrentPutsOfOneBlob", testConcurrentPuts},
		{"PutBytes", testPutBytes},
		{"PutKeepsAPresentBlob", testPutKeeps},
		{"PutRepairsABlobOfTheWrongSize", testPutRepairs},
		{"PutWithADoneContextStoresNothing", testPutCancelled},
		{"Ranges", testRanges},
		{"Missing", testMissing},
		{"Info", testInfo},
		{"CorruptSize", testCorruptSize},
		{"CorruptSameSize", testCorruptSameSize},
		{"Remove", testRemove},
		{"List", testList},
		{"PresignGet", testPresign},
		{"PresignExpired", testPresignExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
}

// Bytes returns n reproducible pseudo-random bytes (seeded by seed).
func Bytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, n2u(n)))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func n2u(n int) uint64 { return uint64(max(n, 0)) } //nolint:gosec // n is not negative

// SHA returns the hex sha256 of data.
func SHA(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Spool writes data to a new file in a test folder, as the upload spool does, and
// returns its path.
func Spool(tb testing.TB, data []byte) string {
	tb.Helper()
	f, err := os.CreateTemp(tb.TempDir(), "spool-*")
	if err != nil {
		tb.Fatal(err)
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		tb.Fatal(err)
	}
	return f.Name()
}

// MustPut stores data through Put from a spool file and returns its sha256.
func MustPut(tb testing.TB, b Backend, data []byte) string {
	tb.Helper()
	sha := SHA(data)
	if err := b.Put(context.Background(), sha, int64(len(data)), Spool(tb, data)); err != nil {
		tb.Fatalf("Put %s: %v", sha, err)
	}
	return sha
}

// MustRead opens blob sha recorded with len(want) bytes, reads it whole and compares.
func MustRead(tb testing.TB, b Backend, sha string, want []byte) {
	tb.Helper()
	r, err := b.Open(context.Background(), sha, int64(len(want)))
	if err != nil {
		tb.Fatalf("Open %s: %v", sha, err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		tb.Fatalf("read %s: %v", sha, err)
	}
	if !slices.Equal(got, want) {
		tb.Fatalf("blob %s: read %d bytes that differ from the %d stored", sha, len(got), len(want))
	}
}

func mustList(tb testing.TB, b Backend) []string {
	tb.Helper()
	got, err := b.List(context.Background())
	if err != nil {
		tb.Fatalf("List: %v", err)
	}
	slices.Sort(got)
	return got
}

func wantList(tb testing.TB, b Backend, want ...string) {
	tb.Helper()
	slices.Sort(want)
	if diff := cmp.Diff(want, mustList(tb, b), cmpEmpty); diff != "" {
		tb.Errorf("List (-want +got):\n%s", diff)
	}
}

// cmpEmpty treats a nil and an empty list as equal.
var cmpEmpty = cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })

// wantErr fails unless err wraps want and names sha.
func wantErr(tb testing.TB, what string, err, want error, sha string) {
	tb.Helper()
	if !errors.Is(err, want) {
		tb.Fatalf("%s: err = %v, want %v", what, err, want)
	}
	if !strings.Contains(err.Error(), sha) {
		tb.Errorf("%s: error %q does not name the blob %s", what, err, sha)
	}
}

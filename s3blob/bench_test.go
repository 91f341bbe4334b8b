package s3blob_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"testing"

	"github.com/pluginyard/registry/s3blob"
	"github.com/pluginyard/registry/s3blob/s3test"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/blobtest"
)

var benchSizes = []int{1 << 20, 32 << 20}

// benchSeq makes every blob a Put benchmark stores new, across runs (-count) too.
var benchSeq atomic.Uint64

// benchBackends opens each backend once per benchmark: the local folder and S3 (versitygw
// on loopback, its posix backend on the same disk).
func benchBackends(b *testing.B) map[string]blobtest.Backend {
	b.Helper()
	folder, err := store.OpenFolder(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	srv := s3test.Start(b)
	s3, err := s3blob.OpenKeys(context.Background(), srv.URL(""), srv.AccessKey, srv.SecretKey)
	if err != nil {
		b.Fatal(err)
	}
	return map[string]blobtest.Backend{"folder": folder, "s3": s3}
}

// BenchmarkPut stores a new blob of each size from a spool file per iteration (preparing
// the spool file is not timed).
func BenchmarkPut(b *testing.B) {
	backends := benchBackends(b)
	for _, name := range []string{"folder", "s3"} {
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("%s/%dMiB", name, size>>20), func(b *testing.B) {
				data := blobtest.Bytes(size, 50)
				spool := b.TempDir()
				b.SetBytes(int64(size))
				for b.Loop() {
					b.StopTimer()
					binary.LittleEndian.PutUint64(data, benchSeq.Add(1))
					sha := blobtest.SHA(data)
					src := spoolIn(b, spool, data)
					b.StartTimer()
					if err := backends[name].Put(context.Background(), sha, int64(size), src); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkOpen opens a blob of each size and reads it whole.
func BenchmarkOpen(b *testing.B) {
	backends := benchBackends(b)
	for _, name := range []string{"folder", "s3"} {
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("%s/%dMiB", name, size>>20), func(b *testing.B) {
				data := blobtest.Bytes(size, 51)
				sha := blobtest.MustPut(b, backends[name], data)
				b.SetBytes(int64(size))
				for b.Loop() {
					r, err := backends[name].Open(context.Background(), sha, int64(size))
					if err != nil {
						b.Fatal(err)
					}
					n, err := io.Copy(io.Discard, r)
					_ = r.Close()
					if err != nil || n != int64(size) {
						b.Fatalf("read %d bytes, %v", n, err)
					}
				}
			})
		}
	}
}

func spoolIn(b *testing.B, dir string, data []byte) string {
	b.Helper()
	f, err := os.CreateTemp(dir, "spool-*")
	if err != nil {
		b.Fatal(err)
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		b.Fatal(err)
	}
	return f.Name()
}

// BenchmarkReadAt reads 64 KiB ranges at spread offsets of one open 32 MiB blob (what a
// download with Range: headers costs; on S3 each is a ranged GET).
func BenchmarkReadAt(b *testing.B) {
	backends := benchBackends(b)
	const size, n = 32 << 20, 64 << 10
	for _, name := range []string{"folder", "s3"} {
		b.Run(name+"/64KiB", func(b *testing.B) {
			sha := blobtest.MustPut(b, backends[name], blobtest.Bytes(size, 52))
			r, err := backends[name].Open(context.Background(), sha, size)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			p := make([]byte, n)
			b.SetBytes(n)
			for i := int64(0); b.Loop(); i++ {
				off := (i * 7919 * n) % (size - n)
				if got, err := r.ReadAt(p, off); got != n || err != nil {
					b.Fatalf("ReadAt(%d) = %d, %v", off, got, err)
				}
			}
		})
	}
}

package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pluginyard/registry/s3blob"
	"github.com/pluginyard/registry/s3blob/s3test"
	"github.com/pluginyard/registry/store"
)

// BenchmarkCopy copies a seeded catalogue (releases of 64 KiB packages, and a row of every
// other table) into a fresh destination per iteration, and reports rows/s and MB/s of
// blobs: SQLite + folder to SQLite + folder, and to PostgreSQL + S3 on real servers.
func BenchmarkCopy(b *testing.B) {
	const blobSize = 64 << 10
	for _, releases := range []int{100, 1000} {
		from := openSQLiteEnd(b)
		seedCatalogue(b, from, releases, blobSize)
		b.Run(fmt.Sprintf("sqlite-to-sqlite/releases=%d", releases), func(b *testing.B) {
			benchCopy(b, from, func(b *testing.B) copyEnd { return openSQLiteEnd(b) })
		})
		b.Run(fmt.Sprintf("sqlite-to-postgres-s3/releases=%d", releases), func(b *testing.B) {
			srv := s3test.Start(b)
			for _, kv := range srv.Env() {
				k, v, _ := strings.Cut(kv, "=")
				b.Setenv(k, v)
			}
			run := 0
			benchCopy(b, from, func(b *testing.B) copyEnd {
				run++
				bl, err := s3blob.Open(context.Background(), srv.URL(fmt.Sprintf("run%d", run)))
				if err != nil {
					b.Fatal(err)
				}
				e := openPostgresEnd(b)
				e.blobs = bl
				return e
			})
		})
	}
}

func benchCopy(b *testing.B, from copyEnd, fresh func(*testing.B) copyEnd) {
	var rows, bytes int64
	var rowTime, blobTime, verifyTime float64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		to := fresh(b)
		b.StartTimer()
		rep := mustCopy(b, from, to, store.CopyOptions{})
		rows, bytes = 0, rep.BytesCopied
		for _, t := range rep.Tables {
			rows += t.Inserted
		}
		rowTime += rep.RowTime.Seconds()
		blobTime += rep.BlobTime.Seconds()
		verifyTime += rep.VerifyTime.Seconds()
	}
	n := float64(b.N)
	b.ReportMetric(float64(rows)/(rowTime/n), "rows/s")
	b.ReportMetric(float64(bytes)/1e6/(blobTime/n), "MB/s")
	b.ReportMetric(verifyTime/n*1e3, "verify-ms")
	b.ReportMetric(float64(rows), "rows")
}

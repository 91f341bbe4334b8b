package store

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/pluginyard/registry/translog"
)

// BenchmarkLog measures, at 1k, 10k and 100k records: one append in its own committed
// transaction (what a yank costs on top of its row; synchronous=FULL, so one fsync), one
// append inside a transaction (the log's share of a publish), and a lookup's inclusion
// proof (latency, and its size in bytes). Run with -benchtime=200x to keep each size's log
// near its label.
func BenchmarkLog(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	key, err := translog.LoadKey(b.TempDir(), "", "bench.example/log")
	if err != nil {
		b.Fatal(err)
	}
	lg := translog.New(s, key)
	var n int64
	for _, size := range []int64{1_000, 10_000, 100_000} {
		if err := fillLog(ctx, s, size); err != nil {
			b.Fatal(err)
		}
		n = size
		b.Run(fmt.Sprintf("prove/records=%d", size), func(b *testing.B) {
			cp, err := lg.Checkpoint(ctx)
			if err != nil {
				b.Fatal(err)
			}
			var bytes int
			i := int64(0)
			for b.Loop() {
				p, err := lg.ProveRecord(ctx, (i*7919)%cp.Size, cp.Size)
				if err != nil {
					b.Fatal(err)
				}
				bytes = len(p) * 32
				i++
			}
			b.ReportMetric(float64(bytes), "proof-bytes")
		})
		b.Run(fmt.Sprintf("sign-checkpoint/records=%d", size), func(b *testing.B) {
			for b.Loop() {
				h, err := tlog.TreeHash(size, txHashes(ctx, s.r))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := translog.SignCheckpoint(key.Signer, size, h); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("full-tile/records=%d", size), func(b *testing.B) {
			t := tlog.Tile{H: translog.TileHeight, L: 0, N: size/256 - 1, W: 256}
			for b.Loop() {
				if _, err := lg.Tile(ctx, t); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("append-in-tx/records=%d", size), func(b *testing.B) {
			err := s.tx(ctx, func(tx *sql.Tx) error {
				for b.Loop() {
					if _, err := appendLog(ctx, tx, benchRecord(n)); err != nil {
						return err
					}
					n++
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
		b.Run(fmt.Sprintf("append-commit/records=%d", size), func(b *testing.B) {
			for b.Loop() {
				err := s.tx(ctx, func(tx *sql.Tx) error {
					_, err := appendLog(ctx, tx, benchRecord(n))
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
		})
	}
}

func benchRecord(i int64) translog.Record {
	return translog.Record{Kind: translog.KindYank, ID: fmt.Sprintf("bench-%d", i%100), Version: fmt.Sprintf("1.0.%d", i),
		SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", Time: time.Unix(1_800_000_000, 0)}
}

// fillLog appends records until the log holds size, in transactions of 10k.
func fillLog(ctx context.Context, s *Store, size int64) error {
	have, err := s.LogSize(ctx)
	if err != nil {
		return err
	}
	for have < size {
		end := min(have+10_000, size)
		err := s.tx(ctx, func(tx *sql.Tx) error {
			for i := have; i < end; i++ {
				if _, err := appendLog(ctx, tx, benchRecord(i)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		have = end
	}
	return nil
}

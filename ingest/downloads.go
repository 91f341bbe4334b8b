package ingest

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/pluginyard/registry/store"
)

// downloadCounter batches download counts in memory, per release and UTC day, so that
// serving a package never waits on a database write: one flush writes the whole batch in
// one transaction.
type downloadCounter struct {
	mu      sync.Mutex
	pending map[store.DownloadDay]int64
	store   MediaStore
	log     *slog.Logger
	now     func() time.Time // the day of a download is the day it was counted, not flushed
}

func newDownloadCounter(st MediaStore, log *slog.Logger) *downloadCounter {
	return &downloadCounter{pending: map[store.DownloadDay]int64{}, store: st, log: log, now: time.Now}
}

func (d *downloadCounter) add(id int64) {
	k := store.DownloadDay{ReleaseID: id, Day: store.DayOf(d.now())}
	d.mu.Lock()
	d.pending[k]++
	d.mu.Unlock()
}

// flush writes the pending counts in one transaction and returns how many downloads it
// wrote; on failure the batch is kept for the next flush.
func (d *downloadCounter) flush(ctx context.Context) (int64, []int64, error) {
	d.mu.Lock()
	batch := d.pending
	d.pending = map[store.DownloadDay]int64{}
	d.mu.Unlock()
	if err := d.store.RecordDownloads(ctx, batch); err != nil {
		d.mu.Lock()
		for k, n := range batch {
			d.pending[k] += n
		}
		d.mu.Unlock()
		return 0, nil, err
	}
	var n int64
	rels := make([]int64, 0, len(batch))
	for k, c := range batch {
		n += c
		rels = append(rels, k.ReleaseID)
	}
	return n, rels, nil
}

// run flushes every `every` until ctx ends, then once more; after each flush that wrote
// something it calls counted (which refreshes the documents' totals).
func (d *downloadCounter) run(ctx context.Context, every time.Duration, counted func(rels []int64)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if _, _, err := d.flush(context.WithoutCancel(ctx)); err != nil {
				d.log.Error("flush downloads", "err", err)
			}
			return
		case <-t.C:
			n, rels, err := d.flush(ctx)
			if err != nil {
				d.log.Error("flush downloads", "err", err)
			}
			if n > 0 {
				counted(rels)
			}
		}
	}
}

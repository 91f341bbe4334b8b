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
	store   *store.Store
	log     *slog.Logger
	now     func() time.Time // the day of a download is the day it was counted, not flushed
}

func newDownloadCounter(st *store.Store, log *slog.Logger) *downloadCounter {
	return &downloadCounter{pending: map[store.DownloadDay]int64{}, store: st, log: log, now: time.Now}
}

func (d *downloadCounter) add(id int64) {
	k := store.DownloadDay{ReleaseID: id, Day: store.DayOf(d.now())}
	d.mu.Lock()
	d.pending[k]++
	d.mu.Unlock()
}

func (d *downloadCounter) flush(ctx context.Context) error {
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
		return err
	}
	return nil
}

func (d *downloadCounter) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if err := d.flush(context.WithoutCancel(ctx)); err != nil {
				d.log.Error("flush downloads", "err", err)
			}
			return
		case <-t.C:
			if err := d.flush(ctx); err != nil {
				d.log.Error("flush downloads", "err", err)
			}
		}
	}
}

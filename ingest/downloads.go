package ingest

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/pluginyard/registry/store"
)

// downloadCounter batches download counts in memory so that serving a package never waits
// on a database write.
type downloadCounter struct {
	mu      sync.Mutex
	pending map[int64]int64
	store   *store.Store
	log     *slog.Logger
}

func newDownloadCounter(st *store.Store, log *slog.Logger) *downloadCounter {
	return &downloadCounter{pending: map[int64]int64{}, store: st, log: log}
}

func (d *downloadCounter) add(id int64) {
	d.mu.Lock()
	d.pending[id]++
	d.mu.Unlock()
}

func (d *downloadCounter) flush(ctx context.Context) error {
	d.mu.Lock()
	batch := d.pending
	d.pending = map[int64]int64{}
	d.mu.Unlock()
	if err := d.store.AddDownloads(ctx, batch); err != nil {
		d.mu.Lock()
		for id, n := range batch {
			d.pending[id] += n
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

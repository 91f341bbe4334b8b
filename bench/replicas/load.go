package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pluginyard/registry/bench/internal/stats"
	"github.com/pluginyard/registry/test/replicas"
)

// maxReads bounds the requests of one reader phase, whatever its duration.
const maxReads = 2_000_000

// latencies are one kind of request's measurements.
type latencies = stats.Stats

// readerClient is the readers' transport: keep-alive, one connection per reader.
func readerClient(n int) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConnsPerHost: n, MaxConnsPerHost: n, DisableCompression: true, IdleConnTimeout: time.Minute}}
}

// readPhase runs o.readers clients reading /index.json (identity) for o.duration, reader
// i on replica i mod len(urls), until stop is closed too when it is not nil.
func readPhase(ctx context.Context, urls []string, o options, stop <-chan struct{}) *latencies {
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	client := readerClient(o.readers)
	var (
		mu    sync.Mutex
		total = &latencies{}
		left  atomic.Int64
		wg    sync.WaitGroup
	)
	left.Store(maxReads)
	start := time.Now()
	for i := range o.readers {
		wg.Go(func() {
			mine := &latencies{}
			for ctx.Err() == nil && left.Add(-1) >= 0 && !closed(stop) {
				began := time.Now()
				err := readIndex(ctx, client, urls[i%len(urls)])
				if ctx.Err() != nil {
					break // cut short by the phase's end: not a measurement
				}
				mine.Add(time.Since(began), 0, err)
			}
			mu.Lock()
			total.Merge(mine)
			mu.Unlock()
		})
	}
	wg.Wait()
	total.Elapsed = time.Since(start)
	return total
}

func closed(c <-chan struct{}) bool {
	if c == nil {
		return false
	}
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func readIndex(ctx context.Context, client *http.Client, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/index.json", nil)
	if err != nil {
		return err
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("index.json: HTTP %d", res.StatusCode)
	}
	return nil
}

// publishPhase runs the readers and o.publishers publishing clients together for
// o.duration (publisher j on replica j mod len(urls), its own plugin, new versions back to
// back, from next[j] on, which it advances); it returns the readers' and the publishers'
// measurements.
func publishPhase(ctx context.Context, urls []string, o options, pkgs [][]replicas.Package, next []int) (reads, pubs *latencies) {
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		out    = &latencies{}
		ranOut atomic.Bool
	)
	start := time.Now()
	for j := range o.publishers {
		wg.Go(func() {
			mine := &latencies{}
			for ; next[j] < len(pkgs[j]); next[j]++ {
				if ctx.Err() != nil {
					break
				}
				pkg := pkgs[j][next[j]]
				began := time.Now()
				a, err := replicas.Publish(urls[j%len(urls)], replicas.AdminToken, pkg)
				if err == nil && a.Status != http.StatusCreated {
					err = fmt.Errorf("publish %s@%s: %s", pkg.ID, pkg.Version, a)
				}
				mine.Add(time.Since(began), 0, err)
			}
			if ctx.Err() == nil {
				ranOut.Store(true)
			}
			mu.Lock()
			out.Merge(mine)
			mu.Unlock()
		})
	}
	reads = readPhase(ctx, urls, o, nil)
	wg.Wait()
	out.Elapsed = time.Since(start)
	if ranOut.Load() {
		out.FirstErr = cmp.Or(out.FirstErr, "the publishers ran out of prepared packages before the phase ended (raise -max-publishes)")
	}
	return reads, out
}

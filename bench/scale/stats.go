package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	benchstats "github.com/pluginyard/registry/bench/internal/stats"
)

// stats is what one kind of request measured.
type stats = benchstats.Stats

func ms(d time.Duration) string { return benchstats.Ms(d) }

// run calls op from workers goroutines until count calls or the duration, and merges what
// they measured. op returns the bytes it moved and an error for a failed call.
func run(ctx context.Context, workers, count int, d time.Duration, op func(ctx context.Context, i int) (int64, error)) *stats {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		next atomic.Int64
		mu   sync.Mutex
		all  = &stats{}
		wg   sync.WaitGroup
	)
	start := time.Now()
	for range workers {
		wg.Go(func() {
			mine := &stats{}
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= count {
					break
				}
				t0 := time.Now()
				n, err := op(ctx, i)
				if ctx.Err() != nil {
					break // cut off by the time bound
				}
				mine.Add(time.Since(t0), n, err)
			}
			mu.Lock()
			all.Merge(mine)
			mu.Unlock()
		})
	}
	wg.Wait()
	all.Elapsed = time.Since(start)
	return all
}

// runRate calls op at a fixed total rate (open loop: a call is due every 1/rate s whatever
// the calls before it took) for the duration, from enough goroutines that a slow call does
// not hold back the next one, and measures each call from the moment it was due, so that a
// server stall counts in full (no coordinated omission).
func runRate(ctx context.Context, rate float64, d time.Duration, op func(ctx context.Context) (int64, error)) *stats {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		mu  sync.Mutex
		all = &stats{}
		wg  sync.WaitGroup
	)
	every := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	for k := 0; ; k++ {
		due := start.Add(time.Duration(k) * every)
		if wait := time.Until(due); wait > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			n, err := op(ctx)
			if ctx.Err() != nil {
				return // cut off by the time bound
			}
			mu.Lock()
			all.Add(time.Since(due), n, err)
			mu.Unlock()
		})
	}
	wg.Wait()
	all.Elapsed = time.Since(start)
	return all
}

func newClient(conns int, compression bool) *http.Client {
	return &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{
		MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: !compression,
		IdleConnTimeout: time.Minute}}
}

// get fetches u (with Accept-Encoding: gzip when gz) and drains the body; any status but
// 200 is an error.
func get(ctx context.Context, c *http.Client, u string, gz bool) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	n, err := io.Copy(io.Discard, res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: status %d", u, res.StatusCode)
	}
	if err == nil && gz && res.Header.Get("Content-Encoding") != "gzip" {
		err = fmt.Errorf("GET %s: not gzip-encoded", u)
	}
	return n, err
}

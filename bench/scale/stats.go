package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// stats is what one kind of request measured.
type stats struct {
	n, errs  int64
	bytes    int64
	lat      []time.Duration
	elapsed  time.Duration
	firstErr string
}

func (s *stats) rps() float64 {
	if s.elapsed <= 0 {
		return 0
	}
	return float64(s.n-s.errs) / s.elapsed.Seconds()
}

func (s *stats) pct(p float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	slices.Sort(s.lat)
	return s.lat[min(len(s.lat)-1, int(float64(len(s.lat))*p))]
}

func (s *stats) add(took time.Duration, n int64, err error) {
	s.n++
	s.lat = append(s.lat, took)
	s.bytes += n
	if err != nil {
		s.errs++
		if s.firstErr == "" {
			s.firstErr = err.Error()
		}
	}
}

func (s *stats) merge(o *stats) {
	s.n += o.n
	s.errs += o.errs
	s.bytes += o.bytes
	s.lat = append(s.lat, o.lat...)
	if s.firstErr == "" {
		s.firstErr = o.firstErr
	}
}

// String is "N ok, R/s, p50 X, p99 Y" with the first error if any.
func (s *stats) String() string {
	out := fmt.Sprintf("%d req, %.1f/s, p50 %s, p99 %s", s.n, s.rps(), ms(s.pct(0.5)), ms(s.pct(0.99)))
	if s.errs > 0 {
		out += fmt.Sprintf(", %d errors (first: %.200s)", s.errs, s.firstErr)
	}
	return out
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

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
				mine.add(time.Since(t0), n, err)
			}
			mu.Lock()
			all.merge(mine)
			mu.Unlock()
		})
	}
	wg.Wait()
	all.elapsed = time.Since(start)
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
			all.add(time.Since(due), n, err)
			mu.Unlock()
		})
	}
	wg.Wait()
	all.elapsed = time.Since(start)
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

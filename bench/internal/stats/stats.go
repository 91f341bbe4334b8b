// Package stats is what the bench programs measure of one kind of request: counts, bytes,
// latencies and the first error, merged from the workers that made the requests.
package stats

import (
	"fmt"
	"slices"
	"time"
)

// Stats is what one kind of request measured.
type Stats struct {
	N, Errs  int64
	Bytes    int64
	Lat      []time.Duration
	Elapsed  time.Duration
	FirstErr string
}

// Rate is the successful requests per second over Elapsed (0 before Elapsed is set).
func (s *Stats) Rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.N-s.Errs) / s.Elapsed.Seconds()
}

// Pct is the p-quantile (0.5, 0.99) of the latencies, 0 when there are none. It sorts Lat.
func (s *Stats) Pct(p float64) time.Duration {
	if len(s.Lat) == 0 {
		return 0
	}
	slices.Sort(s.Lat)
	return s.Lat[min(len(s.Lat)-1, int(float64(len(s.Lat))*p))]
}

// Add files one request that took took, moved n bytes and failed with err (nil: it did not).
func (s *Stats) Add(took time.Duration, n int64, err error) {
	s.N++
	s.Lat = append(s.Lat, took)
	s.Bytes += n
	if err != nil {
		s.Errs++
		if s.FirstErr == "" {
			s.FirstErr = err.Error()
		}
	}
}

// Merge adds o's requests to s (not its Elapsed: the caller times the whole phase).
func (s *Stats) Merge(o *Stats) {
	s.N += o.N
	s.Errs += o.Errs
	s.Bytes += o.Bytes
	s.Lat = append(s.Lat, o.Lat...)
	if s.FirstErr == "" {
		s.FirstErr = o.FirstErr
	}
}

// String is "N req, R/s, p50 X, p99 Y" with the first error if any.
func (s *Stats) String() string {
	out := fmt.Sprintf("%d req, %.1f/s, p50 %s, p99 %s", s.N, s.Rate(), Ms(s.Pct(0.5)), Ms(s.Pct(0.99)))
	if s.Errs > 0 {
		out += fmt.Sprintf(", %d errors (first: %.200s)", s.Errs, s.FirstErr)
	}
	return out
}

// Ms is d in milliseconds with two decimals: "1.25 ms".
func Ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// stats is what one kind of request measured.
type stats struct {
	n, errs, limited int64
	bytes            int64
	lat              []time.Duration
	elapsed          time.Duration
	firstErr         string
}

func (s *stats) rps() float64 { return float64(s.n) / s.elapsed.Seconds() }

func (s *stats) pct(p float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	slices.Sort(s.lat)
	return s.lat[min(len(s.lat)-1, int(float64(len(s.lat))*p))]
}

func (s *stats) merge(o *stats) {
	s.n += o.n
	s.errs += o.errs
	s.limited += o.limited
	s.bytes += o.bytes
	s.lat = append(s.lat, o.lat...)
	if s.firstErr == "" {
		s.firstErr = o.firstErr
	}
}

// record files one response (or transport error) under s.
func (s *stats) record(took time.Duration, status int, n int64, err error, want func(int) bool) {
	s.n++
	s.lat = append(s.lat, took)
	s.bytes += n
	switch {
	case err != nil:
		s.errs++
		s.firstErr = cmpErr(s.firstErr, err.Error())
	case status == http.StatusTooManyRequests:
		s.limited++
	case !want(status):
		s.errs++
		s.firstErr = cmpErr(s.firstErr, "status "+strconv.Itoa(status))
	}
}

func cmpErr(old, now string) string {
	if old != "" {
		return old
	}
	return now
}

func newClient(conns int) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true,
		IdleConnTimeout: time.Minute}}
}

// do runs one GET and drains the body.
func do(ctx context.Context, c *http.Client, u string) (int, int64, error) {
	return doEncoded(ctx, c, u, "")
}

// doEncoded runs one GET with Accept-Encoding: enc ("" sends none) and drains the body,
// counting the bytes as they came (the transport does not decompress).
func doEncoded(ctx context.Context, c *http.Client, u, enc string) (int, int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, 0, err
	}
	if enc != "" {
		req.Header.Set("Accept-Encoding", enc)
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer res.Body.Close()
	n, err := io.Copy(io.Discard, res.Body)
	return res.StatusCode, n, err
}

// hammer runs workers until the phase's time or count bound; each worker calls next to
// pick a request kind and URL. Results are per kind.
func hammer(ctx context.Context, o options, c *http.Client, next func(r *rand.Rand) (kind, url string)) map[string]*stats {
	return hammerEncoded(ctx, o, c, "", next)
}

// hammerEncoded is hammer with every request sending Accept-Encoding: enc.
func hammerEncoded(ctx context.Context, o options, c *http.Client, enc string, next func(r *rand.Rand) (kind, url string)) map[string]*stats {
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	var (
		issued atomic.Int64
		mu     sync.Mutex
		all    = map[string]*stats{}
		wg     sync.WaitGroup
	)
	start := time.Now()
	for w := range o.clients {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 42))
			mine := map[string]*stats{}
			for ctx.Err() == nil && issued.Add(1) <= o.maxRequests {
				kind, u := next(r)
				t0 := time.Now()
				status, n, err := doEncoded(ctx, c, u, enc)
				if ctx.Err() != nil {
					break // cut off by the time bound: not a server error
				}
				if mine[kind] == nil {
					mine[kind] = &stats{}
				}
				mine[kind].record(time.Since(t0), status, n, err, okStatus)
			}
			mu.Lock()
			defer mu.Unlock()
			for k, s := range mine {
				if all[k] == nil {
					all[k] = &stats{}
				}
				all[k].merge(s)
			}
		})
	}
	wg.Wait()
	for _, s := range all {
		s.elapsed = time.Since(start)
	}
	return all
}

func okStatus(s int) bool { return s == http.StatusOK || s == http.StatusNotModified }

// measureIndex loads one URL with Accept-Encoding: enc ("" sends none), checking every
// body's size (as sent: the gzip bytes for gzip).
func measureIndex(ctx context.Context, o options, u, enc string, size int) *stats {
	c := newClient(o.clients)
	defer c.CloseIdleConnections()
	doEncoded(ctx, c, u, enc) // warm up the connection pool and caches
	res := hammerEncoded(ctx, o, c, enc, func(*rand.Rand) (string, string) { return "index", u })["index"]
	if res == nil {
		return &stats{elapsed: time.Nanosecond}
	}
	if res.n > 0 && res.bytes != int64(size)*(res.n-res.errs-res.limited) {
		res.firstErr = cmpErr(res.firstErr, fmt.Sprintf("served %d bytes in %d answers, want %d each", res.bytes, res.n, size))
		res.errs++
	}
	return res
}

// mixed is the outcome of the mixed phase.
type mixed struct {
	kinds       map[string]*stats
	peakRSS     int64 // bytes, VmHWM of the registry process
	publishTime time.Duration
}

func (m *mixed) errors() int64 {
	var n int64
	for _, s := range m.kinds {
		n += s.errs
	}
	return n
}

// mixedLoad runs reads of every kind while one publisher publishes new versions.
func mixedLoad(ctx context.Context, o options, reg *registry) (*mixed, error) {
	m := &mixed{}
	c := newClient(o.clients)
	defer c.CloseIdleConnections()
	pub := &stats{}
	pubDone := make(chan struct{})
	pctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	go func() { defer close(pubDone); publishLoop(pctx, o, reg, pub) }()
	m.kinds = hammer(ctx, o, c, func(r *rand.Rand) (string, string) {
		switch x := r.IntN(100); {
		case x < 40:
			return "index.json", reg.url + "/index.json"
		case x < 60:
			return "search API", reg.url + "/api/v1/plugins?q=" + words[r.IntN(len(words))]
		case x < 75:
			return "home page", reg.url + "/?q=" + url.QueryEscape(words[r.IntN(len(words))])
		default:
			return "download", reg.packages[r.IntN(len(reg.packages))]
		}
	})
	<-pubDone
	pub.elapsed = o.duration
	m.kinds["publish"] = pub
	m.peakRSS = peakRSS(reg.pid)
	return m, nil
}

// publishLoop publishes new versions over HTTP, one at a time, until its bounds.
func publishLoop(ctx context.Context, o options, reg *registry, s *stats) {
	c := newClient(1)
	for i := 0; i < o.publishes && ctx.Err() == nil; i++ {
		id := reg.ids[i%len(reg.ids)]
		data, err := packageOf(id, fmt.Sprintf("1.1.%d", i), words[i%len(words)])
		if err != nil {
			s.record(0, 0, 0, err, nil)
			continue
		}
		t0 := time.Now()
		status, err := postPackage(ctx, c, reg.url, id+"-1.1."+strconv.Itoa(i)+".tar.gz", data)
		if ctx.Err() != nil {
			return
		}
		s.record(time.Since(t0), status, 0, err, func(st int) bool { return st == http.StatusCreated })
	}
}

func postPackage(ctx context.Context, c *http.Client, base, name string, data []byte) (int, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("package", name)
	if err != nil {
		return 0, err
	}
	_, _ = fw.Write(data)
	if err := mw.Close(); err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v1/packages", &body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+adminToken)
	res, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	_, err = io.Copy(io.Discard, res.Body)
	return res.StatusCode, err
}

// peakRSS reads a process's VmHWM from /proc (0 where unavailable).
func peakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func printPhase(out io.Writer, name string, s *stats) {
	fmt.Fprintf(out, "%s\n  %d requests in %.1f s: %.0f req/s, p50 %s, p99 %s, %.0f MB/s, errors %d, 429s %d%s\n\n",
		name, s.n, s.elapsed.Seconds(), s.rps(), s.pct(0.50).Round(time.Microsecond), s.pct(0.99).Round(time.Microsecond),
		float64(s.bytes)/s.elapsed.Seconds()/1e6, s.errs, s.limited, errNote(s))
}

func printMixed(out io.Writer, m *mixed) {
	fmt.Fprintln(out, "(c) mixed load while publishing")
	total := &stats{}
	for _, k := range []string{"index.json", "search API", "home page", "download", "publish"} {
		s := m.kinds[k]
		if s == nil {
			continue
		}
		fmt.Fprintf(out, "  %-11s %7d req  %8.0f req/s  p50 %-10s p99 %-10s errors %d  429s %d%s\n", k, s.n, s.rps(),
			s.pct(0.50).Round(time.Microsecond), s.pct(0.99).Round(time.Microsecond), s.errs, s.limited, errNote(s))
		if k != "publish" {
			total.merge(s)
			total.elapsed = s.elapsed
		}
	}
	fmt.Fprintf(out, "  reads total %d req, %.0f req/s, p50 %s, p99 %s; errors (not 429) %d\n", total.n, total.rps(),
		total.pct(0.50).Round(time.Microsecond), total.pct(0.99).Round(time.Microsecond), m.errors())
	fmt.Fprintf(out, "  peak RSS of the registry process %.0f MiB\n", float64(m.peakRSS)/(1<<20))
}

func errNote(s *stats) string {
	if s.firstErr == "" {
		return ""
	}
	return " (first: " + s.firstErr + ")"
}

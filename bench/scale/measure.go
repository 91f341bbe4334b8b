package main

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/pluginyard/registry/bench/catalog"
	"github.com/pluginyard/registry/bench/load/nginx"
)

// queue holds the packages the publish phases upload: new versions (1.1.j) of plugins
// spread over the catalogue, written to files so the baseline runs on the same bytes.
type queue struct {
	files []string
	data  [][]byte
	next  atomic.Int64
}

func newQueue(dir string, n, count int, key ed25519.PrivateKey) (*queue, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	q := &queue{}
	for j := range count {
		i, v := (j*7919)%n, fmt.Sprintf("1.1.%d", j)
		data, err := catalog.Package(i, v, key)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, catalog.FileName(i, v))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return nil, err
		}
		q.files, q.data = append(q.files, p), append(q.data, data)
	}
	return q, nil
}

// publish uploads package k of the queue and wants 201.
func (q *queue) publish(ctx context.Context, c *http.Client, base string, k int) (int64, error) {
	if k >= len(q.files) {
		return 0, fmt.Errorf("publish queue exhausted")
	}
	status, body, err := postPackage(ctx, c, base, q.files[k], q.data[k])
	if err == nil && status != http.StatusCreated {
		err = fmt.Errorf("publish: status %d: %.200s", status, body)
	}
	return int64(len(q.data[k])), err
}

func (r *result) measureServer(ctx context.Context, o options, dir string, srv *server, q *queue, out io.Writer) {
	plain := newClient(16, false)
	defer plain.CloseIdleConnections()
	idx, err := fetch(ctx, plain, srv.url+"/index.json", false)
	if err != nil {
		r.fail("index.json", err)
		return
	}
	gz, err := fetch(ctx, plain, srv.url+"/index.json", true)
	if err != nil {
		r.fail("index.json gzip", err)
		return
	}
	r.indexBytes, r.gzBytes = int64(len(idx)), int64(len(gz))
	fmt.Fprintf(out, "index.json %d bytes, gzip %d bytes\n", len(idx), len(gz))

	if o.phases["pages"] {
		r.measurePages(ctx, o, srv, plain, out)
	}
	if o.phases["gzip"] {
		r.measureGzip(ctx, o, dir, srv, idx, gz, out)
	}
	if o.phases["readers"] {
		r.measureReaders(ctx, o, srv, q, plain, out)
	}
	if o.phases["publish"] {
		r.measurePublish(ctx, o, srv, q, out)
	}
	r.peak = srv.procStatus("VmHWM")
}

// measureReaders reads /index.json alone, then with one continuous publisher (closed
// loop); then open loop at a quarter of the rate the readers reached alone, in
// -reader-rounds rounds of alone then with the publisher (the machine is shared: a round
// compares the two under the same neighbours), each side's samples pooled over the rounds.
func (r *result) measureReaders(ctx context.Context, o options, srv *server, q *queue, plain *http.Client, out io.Writer) {
	reader := func(ctx context.Context, _ int) (int64, error) { return get(ctx, plain, srv.url+"/index.json", false) }
	r.readers = run(ctx, o.readers, 1<<30, o.duration, reader)
	pub := &publisher{q: q, url: srv.url, next: 2 * o.publishes, last: 2*o.publishes + o.readerPubs}
	if err := pub.start(ctx); err != nil {
		r.fail("publisher", err)
		return
	}
	r.readersPub = run(ctx, o.readers, 1<<30, o.duration, reader)
	if err := pub.stop(); err != nil {
		r.fail("readers with a publisher", err)
	}
	fmt.Fprintf(out, "index.json readers (%d): alone %s; with one publisher %s (publisher: %s)\n", o.readers, r.readers, r.readersPub, &pub.s)
	// The same readers at a quarter of what they reached alone (open loop: a request is due
	// at a fixed rate, measured from when it was due): readers that do not saturate the two
	// cores, so the ratio shows what the publisher does to a reader's latency rather than how
	// much CPU it takes from readers that want all of it.
	rate := max(1, r.readers.Rate()/4)
	open := newClient(64, false)
	defer open.CloseIdleConnections()
	rateReader := func(ctx context.Context) (int64, error) { return get(ctx, open, srv.url+"/index.json", false) }
	r.readersRate, r.readersPubRate = &stats{}, &stats{}
	for k := range o.readerRounds {
		alone := runRate(ctx, rate, o.duration, rateReader)
		if err := pub.start(ctx); err != nil {
			r.fail("publisher", err)
			return
		}
		with := runRate(ctx, rate, o.duration, rateReader)
		if err := pub.stop(); err != nil {
			r.fail("open-loop readers with a publisher", err)
		}
		r.readersRate.Merge(alone)
		r.readersPubRate.Merge(with)
		fmt.Fprintf(out, "index.json readers at %.1f/s (open loop), round %d: alone %s; with one publisher %s: p99 %s\n",
			rate, k+1, alone, with, ratio(float64(with.Pct(.99)), float64(alone.Pct(.99))))
	}
	r.pubDuringReaders = &pub.s
	fmt.Fprintf(out, "index.json readers at %.1f/s (open loop), %d rounds pooled: alone %s; with one publisher %s\n", rate, o.readerRounds, r.readersRate, r.readersPubRate)
}

// postPackage publishes data, the package file at path, with the admin token.
func postPackage(ctx context.Context, c *http.Client, base, path string, data []byte) (int, []byte, error) {
	return catalog.Post(ctx, c, base, adminToken, filepath.Base(path), data)
}

// measurePublish measures publish latency and throughput with 1, then 16 clients.
func (r *result) measurePublish(ctx context.Context, o options, srv *server, q *queue, out io.Writer) {
	// Publish latency and throughput with 1, then 16 clients.
	for _, p := range []struct {
		clients int
		from    int
		dst     **stats
	}{{1, 0, &r.pub1}, {16, o.publishes, &r.pub16}} {
		c := newClient(p.clients, false)
		*p.dst = run(ctx, p.clients, o.publishes, 6*o.duration, func(ctx context.Context, i int) (int64, error) {
			return q.publish(ctx, c, srv.url, p.from+i)
		})
		c.CloseIdleConnections()
		fmt.Fprintf(out, "publish, %d clients: %s\n", p.clients, *p.dst)
	}
}

func fetch(ctx context.Context, c *http.Client, u string, gz bool) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: status %d", u, res.StatusCode)
	}
	if err == nil && gz && res.Header.Get("Content-Encoding") != "gzip" {
		err = fmt.Errorf("GET %s with Accept-Encoding gzip: answered %q", u, res.Header.Get("Content-Encoding"))
	}
	return b, err
}

// pages are the listing pages measured, with /healthz of the same process as the floor.
func pages() []namedStats {
	return []namedStats{
		{name: "healthz (floor)", path: "/healthz"},
		{name: "home", path: "/"},
		{name: "category", path: "/categories/" + catalog.Categories[0]},
		{name: "search common word", path: "/?q=" + url.QueryEscape(catalog.CommonWord)},
		{name: "search topic word", path: "/?q=" + url.QueryEscape(catalog.Words[2])},
		{name: "publisher", path: "/publishers/" + catalog.Publisher(3)},
	}
}

func (r *result) measurePages(ctx context.Context, o options, srv *server, c *http.Client, out io.Writer) {
	for _, p := range pages() {
		_, _ = get(ctx, c, srv.url+p.path, false) // warm up
		p.s = run(ctx, o.pageClients, 5000, o.duration, func(ctx context.Context, _ int) (int64, error) {
			return get(ctx, c, srv.url+p.path, false)
		})
		r.pages = append(r.pages, p)
		size := int64(0)
		if p.s.N > 0 {
			size = p.s.Bytes / p.s.N
		}
		fmt.Fprintf(out, "page %-20s %-28s %s, %d bytes\n", p.name, p.path, p.s, size)
	}
}

// measureGzip loads /index.json with Accept-Encoding: gzip from the registry, then from
// nginx serving the same gzip bytes with gzip_static, -gzip-rounds times alternately (the
// machine is shared: a round compares the two under the same neighbours); the round with
// the median ratio is the one kept, and every round's ratio is printed.
func (r *result) measureGzip(ctx context.Context, o options, dir string, srv *server, idx, gz []byte, out io.Writer) {
	c := newClient(o.readers, false)
	defer c.CloseIdleConnections()
	load := func(u string) *stats {
		return run(ctx, o.readers, 1<<30, o.duration, func(ctx context.Context, _ int) (int64, error) {
			n, err := get(ctx, c, u, true)
			if err == nil && n != int64(len(gz)) {
				err = fmt.Errorf("gzip body %d bytes, want %d", n, len(gz))
			}
			return n, err
		})
	}
	if o.nginx == "" {
		r.gzipReg = load(srv.url + "/index.json")
		fmt.Fprintf(out, "index.json gzip, registry (%d clients): %s\n", o.readers, r.gzipReg)
		return
	}
	ng, err := nginx.Start(ctx, o.nginx, dir, nginx.Options{Files: map[string][]byte{"index.json": idx, "index.json.gz": gz},
		GzipStatic: true, Probe: "/index.json"})
	if err != nil {
		r.gzipReg = load(srv.url + "/index.json")
		fmt.Fprintf(out, "index.json gzip, registry (%d clients): %s\n", o.readers, r.gzipReg)
		r.fail("nginx", err)
		return
	}
	defer ng.Stop()
	r.nginxVersion = ng.Version
	type round struct{ reg, ngx *stats }
	var rounds []round
	for k := range o.gzipRounds {
		rd := round{reg: load(srv.url + "/index.json")}
		fmt.Fprintf(out, "index.json gzip, registry (%d clients): %s\n", o.readers, rd.reg)
		rd.ngx = load(ng.URL + "/index.json")
		fmt.Fprintf(out, "index.json gzip, nginx %s gzip_static (same bytes): %s\n", ng.Version, rd.ngx)
		if o.gzipRounds > 1 {
			fmt.Fprintf(out, "gzip round %d: registry/nginx %s\n", k+1, ratio(rd.reg.Rate(), rd.ngx.Rate()))
		}
		rounds = append(rounds, rd)
	}
	ratioOf := func(rd round) float64 { return rd.reg.Rate() / max(rd.ngx.Rate(), 1e-9) }
	slices.SortFunc(rounds, func(a, b round) int { return cmp.Compare(ratioOf(a), ratioOf(b)) })
	med := rounds[len(rounds)/2]
	r.gzipReg, r.gzipNginx = med.reg, med.ngx
	if len(rounds) > 1 {
		r.gzipSpread = fmt.Sprintf("%.2f–%.2f× over %d rounds", ratioOf(rounds[0]), ratioOf(rounds[len(rounds)-1]), len(rounds))
		fmt.Fprintf(out, "gzip registry/nginx: median %.2f×, %s\n", ratioOf(med), r.gzipSpread)
	}
}

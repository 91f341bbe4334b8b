// Command scale measures the registry at catalogue sizes (bench/catalog makes the
// catalogues): seeding over HTTP, publish latency and throughput with 1 and 16 clients
// against `sha256sum` + `tar -xzf` of the same packages, /index.json readers with and
// without a continuous publisher, the listing pages, idle memory and cold start, and
// /index.json with gzip against nginx gzip_static on the same bytes. Every number is
// printed with the baseline it is compared to, measured in the same run. Loopback only;
// every phase is bounded by count and by time, and the run by -deadline.
//
// Run it with bench/scale/run.sh.
package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pluginyard/registry/bench/catalog"
)

type options struct {
	sizes          []int
	httpSeedBudget time.Duration
	seedClients    int
	duration       time.Duration
	publishes      int
	readerPubs     int
	readerRounds   int
	readers        int
	pageClients    int
	registry       string
	nginx          string
	work           string
	keep           bool
	signed         bool
	deadline       time.Duration
	phases         map[string]bool // the measurements to run (phaseNames); seeding always runs
	gzipRounds     int
}

// phaseNames are the measurements -phases can pick, in the order they run.
var phaseNames = []string{"pages", "gzip", "readers", "publish"}

// parsePhases parses -phases: "all" or a comma-separated subset of phaseNames.
func parsePhases(v string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "all":
			for _, p := range phaseNames {
				out[p] = true
			}
		case slices.Contains(phaseNames, f):
			out[f] = true
		default:
			return nil, fmt.Errorf("unknown phase %q: the phases are all or a comma-separated list of %s", f, strings.Join(phaseNames, ", "))
		}
	}
	return out, nil
}

func main() {
	var o options
	sizes := flag.String("sizes", "1000,10000,50000", "comma-separated catalogue sizes (each at most 100000)")
	flag.DurationVar(&o.httpSeedBudget, "http-seed-budget", 10*time.Minute, "time allowed for seeding over HTTP at each size; the rest is seeded straight into the data directory (0 seeds all of it that way)")
	flag.IntVar(&o.seedClients, "seed-clients", 4, "concurrent HTTP clients while seeding")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "time bound of each read phase")
	flag.IntVar(&o.publishes, "publishes", 60, "publishes per publish phase (each phase is also bounded by 6x -duration)")
	flag.IntVar(&o.readerPubs, "reader-publishes", 6000, "bound of the continuous publisher's publishes during the readers phase")
	flag.IntVar(&o.readerRounds, "reader-rounds", 3, "rounds of open-loop readers alone then with the publisher (1 to 20); each side's samples are pooled")
	flag.IntVar(&o.readers, "readers", 4, "concurrent /index.json readers")
	flag.IntVar(&o.pageClients, "page-clients", 2, "concurrent clients per page")
	flag.StringVar(&o.registry, "registry", "registry", "the registry binary (go build ./cmd/registry)")
	flag.StringVar(&o.nginx, "nginx", "nginx", "nginx binary for the gzip comparison; \"\" skips it")
	flag.StringVar(&o.work, "work", "", "work directory (default a new temporary directory)")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory")
	flag.BoolVar(&o.signed, "signed", false, "sign every package with an ed25519 key that plugins.yaml requires")
	flag.DurationVar(&o.deadline, "deadline", 100*time.Minute, "hard stop of the whole run")
	phases := flag.String("phases", "all", "measurements to run after seeding: all, or a comma-separated list of "+strings.Join(phaseNames, ", ")+" (publish includes its baseline)")
	flag.IntVar(&o.gzipRounds, "gzip-rounds", 1, "rounds of the gzip comparison, registry then nginx in each (1 to 20); the ratio is the median round's")
	child := flag.String("publish-child", "", "internal: publish the files named on stdin to this registry URL (the readers phase's publisher)")
	flag.Parse()
	if *child != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		if err := publishChild(ctx, *child); err != nil {
			fmt.Fprintln(os.Stderr, "scale: publisher:", err)
			os.Exit(1)
		}
		return
	}
	var err error
	if o.phases, err = parsePhases(*phases); err != nil {
		fmt.Fprintf(os.Stderr, "scale: -phases: %v\n", err)
		os.Exit(2)
	}
	if o.readerRounds < 1 || o.readerRounds > 20 {
		fmt.Fprintf(os.Stderr, "scale: -reader-rounds %d: want 1 to 20\n", o.readerRounds)
		os.Exit(2)
	}
	if o.gzipRounds < 1 || o.gzipRounds > 20 {
		fmt.Fprintf(os.Stderr, "scale: -gzip-rounds %d: want 1 to 20\n", o.gzipRounds)
		os.Exit(2)
	}
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err == nil {
			err = catalog.Check(n)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "scale: -sizes %q: %v\n", f, err)
			os.Exit(2)
		}
		o.sizes = append(o.sizes, n)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.deadline)
	defer cancel()
	if err := runAll(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func runAll(ctx context.Context, o options, out io.Writer) error {
	work := o.work
	if work == "" {
		d, err := os.MkdirTemp("", "registry-scale-*")
		if err != nil {
			return err
		}
		work = d
	}
	// nginx started as root serves as an unprivileged worker user: let it traverse work.
	if err := os.Chmod(work, 0o755); err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(work)
	}
	fmt.Fprintf(out, "work directory %s; sizes %v; HTTP seeding budget %s per size\n\n", work, o.sizes, o.httpSeedBudget)
	zero, err := measureZero(ctx, o, filepath.Join(work, "zero"))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "empty registry (empty plugins.yaml): cold start %s, idle RSS %.1f MiB\n\n", ms(zero.cold), mib(zero.rss))
	var all []*result
	for _, n := range o.sizes {
		if ctx.Err() != nil {
			fmt.Fprintf(out, "N=%d: not measured, the run's deadline passed\n", n)
			break
		}
		r := measureSize(ctx, o, filepath.Join(work, "n"+strconv.Itoa(n)), n, out)
		all = append(all, r)
		r.print(out)
		if !o.keep {
			_ = os.RemoveAll(filepath.Join(work, "n"+strconv.Itoa(n)))
		}
	}
	printSummary(out, zero, all)
	return nil
}

// zero is the registry with nothing listed and nothing stored: the floor of memory and
// cold start.
type zero struct {
	cold time.Duration
	rss  int64
}

// measureZero starts the registry twice on an empty list and data directory (the first
// start creates the database) and measures the second start.
func measureZero(ctx context.Context, o options, dir string) (zero, error) {
	list := filepath.Join(dir, "plugins.yaml")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return zero{}, err
	}
	if err := os.WriteFile(list, []byte("plugins: []\n"), 0o644); err != nil {
		return zero{}, err
	}
	var z zero
	for range 2 {
		srv, err := startServer(ctx, o.registry, filepath.Join(dir, "data"), list, time.Minute)
		if err != nil {
			return zero{}, fmt.Errorf("empty registry: %w", err)
		}
		time.Sleep(2 * time.Second)
		z = zero{cold: srv.coldStart, rss: srv.procStatus("VmRSS")}
		srv.stop()
	}
	return z, nil
}

// result is everything measured at one catalogue size; err says where it stopped.
type result struct {
	n                   int
	genTime             time.Duration
	genBytes            int64
	genFiles            int
	seedMode            string
	marks               []catalog.Mark
	httpSeeded          int
	fastTime            time.Duration
	emptyCold, cold     time.Duration
	coldUncached        time.Duration // cold start with plugins.yaml's checked copy removed
	emptyRSS, rss, peak int64
	dataBytes           int64
	readyStatus         string
	readyEntries        int
	indexBytes, gzBytes int64
	pages               []namedStats
	gzipReg, gzipNginx  *stats
	gzipSpread          string // the ratios' range over -gzip-rounds, when more than one
	nginxVersion        string
	readers, readersPub *stats
	// readersRate and readersPubRate are readers at a quarter of readers' rate, open loop.
	readersRate, readersPubRate *stats
	pubDuringReaders            *stats
	base1, base16               *stats
	pub1, pub16                 *stats
	errs                        []string
}

type namedStats struct {
	name, path string
	s          *stats
}

func (r *result) fail(phase string, err error) { r.errs = append(r.errs, phase+": "+err.Error()) }

func measureSize(ctx context.Context, o options, dir string, n int, out io.Writer) *result {
	r := &result{n: n}
	fmt.Fprintf(out, "== N=%d (%s)\n", n, time.Now().UTC().Format("15:04:05Z"))
	var key ed25519.PrivateKey
	if o.signed {
		key = catalog.TestKey()
	}
	t0 := time.Now()
	rep, err := catalog.Write(filepath.Join(dir, "catalog"), catalog.Options{N: n, Key: key})
	if err != nil {
		r.fail("generate", err)
		return r
	}
	r.genTime, r.genBytes, r.genFiles = time.Since(t0), rep.Bytes, rep.Files
	fmt.Fprintf(out, "generated %d files, %.1f MB in %.1f s\n", rep.Files, float64(rep.Bytes)/1e6, r.genTime.Seconds())
	q, err := newQueue(filepath.Join(dir, "publish"), n, 2*o.publishes+o.readerPubs, key)
	if err != nil {
		r.fail("publish packages", err)
		return r
	}
	// The baseline on exactly the packages the publish phases upload; measured again after
	// the publish phases, and the faster of the two kept (the machine is shared).
	if o.phases["publish"] {
		r.measureBaseline(ctx, o, dir, q)
		fmt.Fprintf(out, "baseline sha256sum+tar -xzf: 1 worker %s; 16 workers %s\n", r.base1, r.base16)
	}
	srv, ok := r.seed(ctx, o, dir, rep, out)
	if !ok {
		return r
	}
	defer func() { srv.stop() }()
	r.measureServer(ctx, o, dir, srv, q, out)
	if o.phases["publish"] && r.measureBaseline(ctx, o, dir, q) {
		fmt.Fprintf(out, "baseline again, faster this time: 1 worker %s; 16 workers %s\n", r.base1, r.base16)
	}
	return r
}

// measureBaseline runs the baseline with 1 and 16 workers and keeps, for each, the faster
// of this and any earlier measurement; it says whether either improved.
func (r *result) measureBaseline(ctx context.Context, o options, dir string, q *queue) bool {
	better := false
	for _, b := range []struct {
		workers int
		files   []string
		dst     **stats
	}{{1, q.files[:o.publishes], &r.base1}, {16, q.files[o.publishes : 2*o.publishes], &r.base16}} {
		s, err := baseline(ctx, b.files, dir, b.workers, 6*o.duration)
		if err != nil {
			r.fail("baseline", err)
			continue
		}
		if *b.dst == nil || s.Rate() > (*b.dst).Rate() {
			better = better || *b.dst != nil
			*b.dst = s
		}
	}
	return better
}

// seed starts the registry on an empty data directory (twice: the second start is the
// cold-start and memory baseline), seeds the catalogue over HTTP within the budget, the
// rest straight into the data directory, and restarts the registry for its cold start.
func (r *result) seed(ctx context.Context, o options, dir string, rep *catalog.Report, out io.Writer) (*server, bool) {
	data := filepath.Join(dir, "data")
	first, err := startServer(ctx, o.registry, data, rep.ListPath, 2*time.Minute)
	if err != nil {
		r.fail("empty start", err)
		return nil, false
	}
	first.stop()
	srv, err := startServer(ctx, o.registry, data, rep.ListPath, 2*time.Minute)
	if err != nil {
		r.fail("empty start", err)
		return nil, false
	}
	time.Sleep(2 * time.Second)
	r.emptyCold, r.emptyRSS = srv.coldStart, srv.procStatus("VmRSS")
	fmt.Fprintf(out, "empty catalogue: cold start %s, idle RSS %.1f MiB\n", ms(r.emptyCold), mib(r.emptyRSS))
	every := min(1000, max(1, n10(r.n)))
	r.seedMode = "http"
	if o.httpSeedBudget > 0 {
		sctx, cancel := context.WithTimeout(ctx, o.httpSeedBudget)
		marks, err := catalog.SeedHTTP(sctx, srv.url, adminToken, rep, o.seedClients, every)
		cancel()
		r.marks = marks
		if len(marks) > 0 {
			r.httpSeeded = marks[len(marks)-1].Done
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			r.fail("seed over HTTP", err)
		}
		fmt.Fprintf(out, "seeded over HTTP (%d clients): %s\n", o.seedClients, marksString(marks))
	}
	srv.stop()
	if r.httpSeeded < r.n {
		r.seedMode = fmt.Sprintf("http %d + store %d", r.httpSeeded, r.n-r.httpSeeded)
		t0 := time.Now()
		if _, err := catalog.SeedStore(ctx, data, rep, r.n); err != nil {
			r.fail("seed into the store", err)
			return nil, false
		}
		r.fastTime = time.Since(t0)
		fmt.Fprintf(out, "seeded the remaining %d straight into the store in %.1f s\n", r.n-r.httpSeeded, r.fastTime.Seconds())
	}
	r.dataBytes = dirSize(data)
	// The first start after a store seeding may do one-off work (cards of releases that
	// have none): the cold start measured is the second.
	if r.httpSeeded < r.n {
		if warm, err := startServer(ctx, o.registry, data, rep.ListPath, 5*time.Minute); err == nil {
			fmt.Fprintf(out, "first start after the store seeding: %s\n", ms(warm.coldStart))
			warm.stop()
		}
	}
	srv, err = startServer(ctx, o.registry, data, rep.ListPath, 5*time.Minute)
	if err != nil {
		r.fail("start with the catalogue", err)
		fmt.Fprintf(out, "the registry did not start with %d plugins: %v\n", r.n, err)
		return nil, false
	}
	time.Sleep(2 * time.Second)
	r.cold, r.rss = srv.coldStart, srv.procStatus("VmRSS")
	r.readyStatus, r.readyEntries = srv.readyEntries()
	fmt.Fprintf(out, "cold start %s (readyz %s, %d entries), idle RSS %.1f MiB, data dir %.1f MB\n",
		ms(r.cold), r.readyStatus, r.readyEntries, mib(r.rss), float64(r.dataBytes)/1e6)
	// A start with plugins.yaml or the binary changed (a deploy) checks the list again
	// rather than loading the checked copy serve keeps: that start, with the copy removed.
	srv.stop()
	if err := os.Remove(filepath.Join(data, "cache", "plugins-list.gob")); err != nil {
		r.fail("remove the checked list's cache", err)
	}
	srv, err = startServer(ctx, o.registry, data, rep.ListPath, 5*time.Minute)
	if err != nil {
		r.fail("start with the list not cached", err)
		return nil, false
	}
	r.coldUncached = srv.coldStart
	fmt.Fprintf(out, "cold start with the list checked again (not cached): %s\n", ms(r.coldUncached))
	return srv, true
}

func n10(n int) int { return n / 10 }

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func marksString(marks []catalog.Mark) string {
	var b strings.Builder
	var prev catalog.Mark
	for _, m := range marks {
		per := (m.At - prev.At).Seconds() / float64(m.Done-prev.Done) * 1000
		fmt.Fprintf(&b, "[%d in %.1f s, %.1f s/1k] ", m.Done, m.At.Seconds(), per)
		prev = m
	}
	return b.String()
}

// Command replicas is the benchmark of issue #16: in one run, on loopback only, it starts
// three set-ups of `registry serve` and measures each the same way:
//
//   - embedded: one replica, the default SQLite file and blob folder (no flags);
//   - pg+s3 x1: one replica on PostgreSQL and an S3 bucket (versitygw);
//   - pg+s3 x3: three replicas sharing that database and bucket;
//   - pg+folder x1, a diagnostic: one replica on PostgreSQL with a blob folder, to tell
//     the bucket's share of a publish from the database's.
//
// For each: index.json requests per second and latency from -readers keep-alive clients
// (spread over the replicas) for -duration; then the same readers while -publishers
// clients publish new versions back to back (spread likewise) for -duration: publish
// throughput and the readers' p99 during publishes. Ratios are against the embedded
// set-up of the same run. PostgreSQL and the bucket are started by the test harness of
// test/replicas (storetest.StartPostgres, s3test.StartS3), stopped at the end.
//
//	go run ./bench/replicas -duration 10s
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/pluginyard/registry/test/replicas"
)

// options bound every phase by time and by count.
type options struct {
	duration    time.Duration
	readers     int
	publishers  int
	maxPublish  int // packages prepared per set-up: the publish phase's count bound
	payload     int
	seed        int
	rounds      int
	registryBin string
}

// maxPrepared bounds the bytes of executable the prepared packages hold in memory
// (-max-publishes × -payload).
const maxPrepared = 4 << 30

// check refuses options a run cannot use: no clients (the packages are dealt to the
// publishers), or more prepared package bytes than maxPrepared.
func (o options) check() error {
	switch {
	case o.duration <= 0:
		return fmt.Errorf("-duration %s: want more than 0", o.duration)
	case o.readers < 1 || o.publishers < 1:
		return fmt.Errorf("-readers %d, -publishers %d: want at least 1 of each", o.readers, o.publishers)
	case o.maxPublish < 1 || o.payload < 0 || o.seed < 0:
		return fmt.Errorf("-max-publishes %d, -payload %d, -seed %d: want at least 1, 0 and 0", o.maxPublish, o.payload, o.seed)
	case int64(o.maxPublish)*int64(o.payload) > maxPrepared:
		return fmt.Errorf("-max-publishes %d × -payload %d is %d bytes held in memory, over %d: lower one of them", o.maxPublish, o.payload, int64(o.maxPublish)*int64(o.payload), int64(maxPrepared))
	}
	return nil
}

func main() {
	var o options
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "time bound of each phase")
	flag.IntVar(&o.readers, "readers", 4, "concurrent index.json clients")
	flag.IntVar(&o.publishers, "publishers", 4, "concurrent publishing clients")
	flag.IntVar(&o.maxPublish, "max-publishes", 1500, "packages prepared per set-up (the publish phase stops when they run out)")
	flag.IntVar(&o.payload, "payload", 16<<10, "bytes of executable in each published package")
	flag.IntVar(&o.seed, "seed", 50, "plugins published before measuring, so index.json lists that many entries besides the publishers'")
	flag.IntVar(&o.rounds, "rounds", 2, "rounds of the two phases, alternating between the set-ups (the table pools every round: rates over their summed time, percentiles over all samples)")
	flag.StringVar(&o.registryBin, "registry", "", "registry binary; default: go build ./cmd/registry")
	flag.Parse()
	if err := o.check(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/replicas:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// A hard stop: rounds of every set-up's two phases (and a warm-up), their starts and
	// the preparation.
	o.rounds = max(o.rounds, 1)
	ctx, cancel := context.WithTimeout(ctx, time.Duration(2*len(setups)*o.rounds)*(o.duration+time.Second)+10*time.Minute)
	defer cancel()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench/replicas:", err)
		os.Exit(1)
	}
}

// setup is one way of running the registry.
type setup struct {
	name     string
	replicas int
	embedded bool
	folder   bool // PostgreSQL with a shared blob folder: the bucket's share of the cost
}

var setups = []setup{
	{name: "embedded (SQLite + folder)", replicas: 1, embedded: true},
	{name: "PostgreSQL + S3, 1 replica", replicas: 1},
	{name: "PostgreSQL + S3, 3 replicas", replicas: 3},
	{name: "PostgreSQL + folder, 1 replica (diagnostic)", replicas: 1, folder: true},
}

func run(ctx context.Context, o options, out io.Writer) error {
	bin := o.registryBin
	if bin == "" {
		dir, err := os.MkdirTemp("", "bench-replicas-bin-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if bin, err = replicas.Build(dir); err != nil {
			return err
		}
	}
	// The same packages serve every set-up (each publishes them from the first on), made
	// once before any set-up starts.
	pkgs, err := preparePackages(o)
	if err != nil {
		return err
	}
	running := make([]*running, 0, len(setups))
	defer func() {
		for _, r := range running {
			r.tb.close()
		}
	}()
	for _, s := range setups {
		r, err := start(o, bin, s, pkgs, out)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		running = append(running, r)
	}
	// Every set-up runs while the others idle; rounds alternate between them, so that a
	// burst of load from the rest of the machine does not fall on one set-up only.
	for round := range o.rounds {
		for _, r := range running {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			res := r.measure(ctx, o, out, round)
			r.results = append(r.results, res)
		}
	}
	results := make([]result, len(running))
	for i, r := range running {
		results[i] = pooled(r.results)
	}
	printTable(out, o, results)
	return nil
}

// running is a started set-up.
type running struct {
	setup   setup
	tb      *runner
	urls    []string
	pkgs    [][]replicas.Package // per publisher, shared by the set-ups; the rounds take them in turn
	next    []int                // per publisher: the next package to publish
	results []result             // one a round
}

// start starts one set-up, seeds it and warms it up; a Fatal or Skip of the harness is
// an error here.
func start(o options, bin string, s setup, pkgs [][]replicas.Package, out io.Writer) (r *running, err error) {
	logf := func(format string, args ...any) { fmt.Fprintf(out, "  "+format+"\n", args...) }
	tb, err := newRunner(s.name, logf)
	if err != nil {
		return nil, err
	}
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		tb.close()
		a, ok := v.(abort)
		if !ok {
			panic(v)
		}
		what := "failed"
		if a.skipped {
			what = "cannot run (a backend is not installed)"
		}
		r, err = nil, fmt.Errorf("set-up %s: %s", what, a.msg)
	}()
	fmt.Fprintf(out, "%s: starting ...\n", s.name)
	c := replicas.Start(tb, bin, replicas.Options{Replicas: s.replicas, Embedded: s.embedded, FolderBlobs: s.folder, Plugins: benchPlugins(o)})
	r = &running{setup: s, tb: tb, pkgs: pkgs, next: make([]int, o.publishers)}
	for _, rep := range c.Replicas {
		r.urls = append(r.urls, rep.URL)
	}
	if err := seed(r.urls[0], o); err != nil {
		tb.close()
		return nil, err
	}
	return r, nil
}

// measure runs one round of the two phases on the set-up.
func (r *running) measure(ctx context.Context, o options, out io.Writer, round int) result {
	warm := o
	warm.duration = min(time.Second, o.duration/5)
	_ = readPhase(ctx, r.urls, warm, nil) // connections open, caches warm: not measured
	res := result{setup: r.setup}
	res.readsAlone = readPhase(ctx, r.urls, o, nil)
	res.readsPublishing, res.publish = publishPhase(ctx, r.urls, o, r.pkgs, r.next)
	fmt.Fprintf(out, "round %d, %s: %s\n", round+1, r.setup.name, res.summary())
	return res
}

// benchPlugins are the plugins the publishers publish versions of, one each, and the
// seeded ones.
func benchPlugins(o options) []replicas.Plugin {
	var ps []replicas.Plugin
	for i := range o.publishers {
		ps = append(ps, replicas.Plugin{ID: fmt.Sprintf("bench-%02d", i), Repo: fmt.Sprintf("bench/plugin-%02d", i), Owner: "bench"})
	}
	for i := range o.seed {
		ps = append(ps, replicas.Plugin{ID: fmt.Sprintf("seed-%03d", i), Repo: fmt.Sprintf("bench/seed-%03d", i), Owner: "bench"})
	}
	return ps
}

// seed publishes version 1.0.0 of every seeded plugin on the replica at base.
func seed(base string, o options) error {
	for i := range o.seed {
		pkg, err := replicas.NewPackage(fmt.Sprintf("seed-%03d", i), "1.0.0", 0, 4<<10)
		if err != nil {
			return err
		}
		a, err := replicas.Publish(base, replicas.AdminToken, pkg)
		if err != nil {
			return fmt.Errorf("seed %s: %w", pkg.ID, err)
		}
		if a.Status != http.StatusCreated {
			return fmt.Errorf("seed %s: %s", pkg.ID, a)
		}
	}
	return nil
}

// preparePackages makes the packages of the publish phase before it starts, so that the
// phase measures publishing, not packing: maxPublish in all, dealt to the publishers.
func preparePackages(o options) ([][]replicas.Package, error) {
	per := max(1, o.maxPublish/o.publishers)
	out := make([][]replicas.Package, o.publishers)
	for p := range out {
		for k := range per {
			pkg, err := replicas.NewPackage(fmt.Sprintf("bench-%02d", p), fmt.Sprintf("1.%d.%d", k/100, k%100), 0, o.payload)
			if err != nil {
				return nil, err
			}
			out[p] = append(out[p], pkg)
		}
	}
	return out, nil
}

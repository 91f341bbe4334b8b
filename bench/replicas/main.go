// Command replicas is the benchmark of issue #16: in one run, on loopback only, it starts
// three set-ups of `registry serve` and measures each the same way:
//
//   - embedded: one replica, the default SQLite file and blob folder (no flags);
//   - pg+s3 x1: one replica on PostgreSQL and an S3 bucket (versitygw);
//   - pg+s3 x3: three replicas sharing that database and bucket.
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
	registryBin string
}

func main() {
	var o options
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "time bound of each phase")
	flag.IntVar(&o.readers, "readers", 4, "concurrent index.json clients")
	flag.IntVar(&o.publishers, "publishers", 4, "concurrent publishing clients")
	flag.IntVar(&o.maxPublish, "max-publishes", 1500, "packages prepared per set-up (the publish phase stops when they run out)")
	flag.IntVar(&o.payload, "payload", 16<<10, "bytes of executable in each published package")
	flag.IntVar(&o.seed, "seed", 50, "plugins published before measuring, so index.json lists that many entries besides the publishers'")
	flag.StringVar(&o.registryBin, "registry", "", "registry binary; default: go build ./cmd/registry")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// A hard stop: three set-ups of two phases, their starts and the preparation.
	ctx, cancel := context.WithTimeout(ctx, 6*o.duration+10*time.Minute)
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
}

var setups = []setup{
	{name: "embedded (SQLite + folder)", replicas: 1, embedded: true},
	{name: "PostgreSQL + S3, 1 replica", replicas: 1},
	{name: "PostgreSQL + S3, 3 replicas", replicas: 3},
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
	results := make([]result, 0, len(setups))
	for _, s := range setups {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		res, err := measureSetup(ctx, o, bin, s, out)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		results = append(results, res)
	}
	printTable(out, o, results)
	return nil
}

// measureSetup starts one set-up, runs its two phases and stops it.
func measureSetup(ctx context.Context, o options, bin string, s setup, out io.Writer) (res result, err error) {
	logf := func(format string, args ...any) { fmt.Fprintf(out, "  "+format+"\n", args...) }
	tb, err := newRunner(s.name, logf)
	if err != nil {
		return result{}, err
	}
	defer tb.close()
	defer func() {
		if v := recover(); v != nil {
			a, ok := v.(abort)
			if !ok {
				panic(v)
			}
			what := "failed"
			if a.skipped {
				what = "cannot run (a backend is not installed)"
			}
			err = fmt.Errorf("set-up %s: %s", what, a.msg)
		}
	}()
	fmt.Fprintf(out, "%s: starting ...\n", s.name)
	c := replicas.Start(tb, bin, replicas.Options{Replicas: s.replicas, Embedded: s.embedded, Plugins: benchPlugins(o)})
	urls := make([]string, len(c.Replicas))
	for i, r := range c.Replicas {
		urls[i] = r.URL
	}
	pkgs, err := preparePackages(o)
	if err != nil {
		return result{}, err
	}
	if err := seed(urls[0], o); err != nil {
		return result{}, err
	}
	res = result{setup: s}
	warm := o
	warm.duration = min(time.Second, o.duration/5)
	_ = readPhase(ctx, urls, warm, nil) // connections open, caches warm: not measured
	fmt.Fprintf(out, "%s: readers alone for %s ...\n", s.name, o.duration)
	res.readsAlone = readPhase(ctx, urls, o, nil)
	fmt.Fprintf(out, "%s: readers while publishing for %s ...\n", s.name, o.duration)
	res.readsPublishing, res.publish = publishPhase(ctx, urls, o, pkgs)
	fmt.Fprintf(out, "%s: %s\n", s.name, res.summary())
	return res, nil
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
		if a.Status != 201 {
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

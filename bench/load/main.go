// Command load is the registry's load script. On loopback only, bounded by request count
// and by time, it
//
//	(a) seeds a data directory with N published plugins, runs `registry serve` on it as its
//	    own process, and measures /index.json
//	    requests per second with C keep-alive clients;
//	(b) serves the same bytes from disk with Debian's nginx (started here on a loopback
//	    port with a minimal configuration, stopped at the end) and prints the ratio;
//	(c) runs a mixed load (index.json, search API, home page, package downloads) while
//	    publishes run, and prints requests per second, p50/p99 latency, errors (429s
//	    apart) and peak memory.
//
// Run it with bench/load/run.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/pluginyard/registry/bench/load/nginx"
)

// options bound every phase by count and by time.
type options struct {
	plugins     int
	clients     int
	duration    time.Duration
	maxRequests int64
	publishes   int
	nginx       string
	keep        bool
	cpuProfile  string
	registry    string
	mixed       bool
	rounds      int
}

func main() {
	var o options
	flag.IntVar(&o.plugins, "plugins", 1000, "plugins to publish before measuring")
	flag.IntVar(&o.clients, "clients", 32, "concurrent keep-alive clients")
	flag.DurationVar(&o.duration, "duration", 8*time.Second, "time bound of each phase")
	flag.Int64Var(&o.maxRequests, "requests", 500_000, "request-count bound of each phase")
	flag.IntVar(&o.publishes, "publishes", 200, "publish-count bound of the mixed phase")
	flag.StringVar(&o.nginx, "nginx", "nginx", "nginx binary for phase (b); \"\" skips it")
	flag.StringVar(&o.registry, "registry", "registry", "the registry binary (go build ./cmd/registry)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the load generator during phase (a) to this file")
	flag.BoolVar(&o.mixed, "mixed", true, "run phase (c), the mixed load; -mixed=false stops after the index.json phases")
	flag.IntVar(&o.rounds, "rounds", 1, "rounds of the index.json comparison, registry and nginx alternating (the median ratio is printed)")
	flag.Parse()
	o.rounds = max(o.rounds, 1)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// A hard stop, whatever happens: four index.json phases a round, the mixed phase, setup.
	ctx, cancel := context.WithTimeout(ctx, time.Duration(4*o.rounds+1)*o.duration+5*time.Minute)
	defer cancel()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, out io.Writer) error {
	dir, err := os.MkdirTemp("", "registry-load-*")
	if err != nil {
		return fmt.Errorf("load: temp dir: %w", err)
	}
	if !o.keep {
		defer os.RemoveAll(dir)
	}
	fmt.Fprintf(out, "setup: publishing %d plugins into %s ...\n", o.plugins, dir)
	reg, err := startRegistry(ctx, o.registry, dir, o.plugins)
	if err != nil {
		return err
	}
	defer reg.stop()
	fmt.Fprintf(out, "setup: %d plugins in %.1f s; index.json is %d bytes (%d entries), %d bytes gzip\n\n",
		o.plugins, reg.setupTime.Seconds(), len(reg.index), reg.entries, len(reg.gzipIndex))

	stopProfile, err := startProfile(o.cpuProfile)
	if err != nil {
		return err
	}
	regRes := measureIndex(ctx, o, reg.url+"/index.json", "", len(reg.index))
	regGz := measureIndex(ctx, o, reg.url+"/index.json", "gzip", len(reg.gzipIndex))
	stopProfile()
	printPhase(out, "(a) registry /index.json", regRes)
	printPhase(out, "(a) registry /index.json, Accept-Encoding: gzip", regGz)
	if o.nginx != "" {
		if err := compareNginx(ctx, o, dir, reg, regRes, regGz, out); err != nil {
			fmt.Fprintf(out, "(b) nginx: skipped: %v\n\n", err)
		}
	}
	if !o.mixed {
		return nil
	}
	mixed, err := mixedLoad(ctx, o, reg)
	if err != nil {
		return err
	}
	printMixed(out, mixed)
	if mixed.errors() > 0 {
		return fmt.Errorf("load: %d errors other than 429 under mixed load", mixed.errors())
	}
	return nil
}

// compareNginx serves the registry's very bytes with nginx, index.json and, for
// gzip_static, index.json.gz, loads both representations the same way and prints the
// ratios. With -rounds above 1 the registry and nginx are measured again, alternating, so
// that a noisy neighbour weighs on both; the median ratio of the rounds is printed.
func compareNginx(ctx context.Context, o options, dir string, reg *registry, regRes, regGz *stats, out io.Writer) error {
	ng, err := nginx.Start(ctx, o.nginx, dir, nginx.Options{
		Files:      map[string][]byte{"index.json": reg.index, "index.json.gz": reg.gzipIndex},
		GzipStatic: true, Probe: "/index.json"})
	if err != nil {
		return err
	}
	defer ng.Stop()
	var idRatios, gzRatios []float64
	for round := 1; round <= o.rounds && ctx.Err() == nil; round++ {
		if round > 1 {
			regRes = measureIndex(ctx, o, reg.url+"/index.json", "", len(reg.index))
			regGz = measureIndex(ctx, o, reg.url+"/index.json", "gzip", len(reg.gzipIndex))
			printPhase(out, fmt.Sprintf("(a) round %d: registry /index.json", round), regRes)
			printPhase(out, fmt.Sprintf("(a) round %d: registry /index.json, Accept-Encoding: gzip", round), regGz)
		}
		ngRes := measureIndex(ctx, o, ng.URL+"/index.json", "", len(reg.index))
		ngGz := measureIndex(ctx, o, ng.URL+"/index.json", "gzip", len(reg.gzipIndex))
		printPhase(out, fmt.Sprintf("(b) round %d: nginx %s /index.json (same bytes, from disk)", round, ng.Version), ngRes)
		printPhase(out, fmt.Sprintf("(b) round %d: nginx %s /index.json, Accept-Encoding: gzip (gzip_static, the registry's gzip bytes)", round, ng.Version), ngGz)
		idRatios = append(idRatios, regRes.rps()/ngRes.rps())
		gzRatios = append(gzRatios, regGz.rps()/ngGz.rps())
		fmt.Fprintf(out, "round %d: registry/nginx identity %.2fx, gzip %.2fx\n\n", round, idRatios[round-1], gzRatios[round-1])
	}
	printRatio(out, "identity", median(idRatios))
	printRatio(out, "gzip", median(gzRatios))
	fmt.Fprintln(out)
	return nil
}

// median of a non-empty list (the lower middle of an even count).
func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[(len(v)-1)/2]
}

func printRatio(out io.Writer, what string, ratio float64) {
	verdict := "meets"
	if ratio < 0.8 {
		verdict = "MISSES"
	}
	fmt.Fprintf(out, "ratio registry/nginx, %s (median of the rounds): %.2fx (%s the 0.8x target)\n", what, ratio, verdict)
}

// startProfile starts a CPU profile into path ("" does nothing); call the result to stop.
func startProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("load: cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("load: cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}

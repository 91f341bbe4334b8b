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
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// A hard stop, whatever happens: three phases plus setup.
	ctx, cancel := context.WithTimeout(ctx, 3*o.duration+5*time.Minute)
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
	fmt.Fprintf(out, "setup: %d plugins in %.1f s; index.json is %d bytes (%d entries)\n\n",
		o.plugins, reg.setupTime.Seconds(), len(reg.index), reg.entries)

	stopProfile, err := startProfile(o.cpuProfile)
	if err != nil {
		return err
	}
	regRes := measureIndex(ctx, o, reg.url+"/index.json", len(reg.index))
	stopProfile()
	printPhase(out, "(a) registry /index.json", regRes)
	if o.nginx != "" {
		if err := compareNginx(ctx, o, dir, reg.index, regRes, out); err != nil {
			fmt.Fprintf(out, "(b) nginx: skipped: %v\n\n", err)
		}
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

func compareNginx(ctx context.Context, o options, dir string, index []byte, regRes *stats, out io.Writer) error {
	ng, err := nginx.Start(ctx, o.nginx, dir, nginx.Options{Files: map[string][]byte{"index.json": index}, Probe: "/index.json"})
	if err != nil {
		return err
	}
	defer ng.Stop()
	ngRes := measureIndex(ctx, o, ng.URL+"/index.json", len(index))
	printPhase(out, "(b) nginx "+ng.Version+" /index.json (same bytes, from disk)", ngRes)
	ratio := regRes.rps() / ngRes.rps()
	verdict := "meets"
	if ratio < 0.8 {
		verdict = "MISSES"
	}
	fmt.Fprintf(out, "ratio registry/nginx: %.2fx (%s the 0.8x target)\n\n", ratio, verdict)
	return nil
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

package main

import (
	"fmt"
	"io"
	"runtime"
	"time"
)

// result is what one set-up measured.
type result struct {
	setup           setup
	readsAlone      *latencies // index.json, no publisher
	readsPublishing *latencies // index.json while publishing
	publish         *latencies // the publishes of that phase
}

// pooled is the rounds of one set-up as one measurement.
func pooled(rounds []result) result {
	out := result{setup: rounds[0].setup, readsAlone: &latencies{}, readsPublishing: &latencies{}, publish: &latencies{}}
	for _, r := range rounds {
		for _, p := range []struct{ to, from *latencies }{{out.readsAlone, r.readsAlone}, {out.readsPublishing, r.readsPublishing}, {out.publish, r.publish}} {
			p.to.merge(p.from)
			p.to.elapsed += p.from.elapsed
		}
	}
	return out
}

func (r result) summary() string {
	return fmt.Sprintf("index.json %.0f req/s (p99 %s); publishing %.1f/s (p50 %s, p99 %s, %d errors%s) with readers at %.0f req/s, p99 %s (%d errors%s)",
		r.readsAlone.rate(), ms(r.readsAlone.pct(0.99)),
		r.publish.rate(), ms(r.publish.pct(0.50)), ms(r.publish.pct(0.99)), r.publish.errs, note(r.publish.firstErr),
		r.readsPublishing.rate(), ms(r.readsPublishing.pct(0.99)), r.readsPublishing.errs+r.readsAlone.errs, note(cmpOr(r.readsAlone.firstErr, r.readsPublishing.firstErr)))
}

func note(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// printTable prints the Markdown table of the run, ratios against the first (embedded) set-up.
func printTable(out io.Writer, o options, results []result) {
	base := results[0]
	fmt.Fprintf(out, "\n%d readers, %d publishers (%d KiB packages), %d seeded plugins, %d rounds of %s per phase, GOMAXPROCS %d, %s\n\n",
		o.readers, o.publishers, o.payload>>10, o.seed, o.rounds, o.duration, runtime.GOMAXPROCS(0), time.Now().UTC().Format(time.DateOnly))
	fmt.Fprintln(out, "| set-up | publishes/s | × embedded | publish p50 / p99 | index.json req/s (no publisher) | × embedded | reader p99 (no publisher) | reader p99 during publishes | × embedded | errors |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Fprintf(out, "| %s | %.1f | %.2f | %s / %s | %.0f | %.2f | %s | %s | %.2f | %d |\n", r.setup.name,
			r.publish.rate(), ratio(r.publish.rate(), base.publish.rate()),
			ms(r.publish.pct(0.50)), ms(r.publish.pct(0.99)),
			r.readsAlone.rate(), ratio(r.readsAlone.rate(), base.readsAlone.rate()),
			ms(r.readsAlone.pct(0.99)), ms(r.readsPublishing.pct(0.99)),
			ratio(float64(r.readsPublishing.pct(0.99)), float64(base.readsPublishing.pct(0.99))),
			r.publish.errs+r.readsAlone.errs+r.readsPublishing.errs)
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

package main

import (
	"cmp"
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
			p.to.Merge(p.from)
			p.to.Elapsed += p.from.Elapsed
		}
	}
	return out
}

func (r result) summary() string {
	return fmt.Sprintf("index.json %.0f req/s (p99 %s); publishing %.1f/s (p50 %s, p99 %s, %d errors%s) with readers at %.0f req/s, p99 %s (%d errors%s)",
		r.readsAlone.Rate(), ms(r.readsAlone.Pct(0.99)),
		r.publish.Rate(), ms(r.publish.Pct(0.50)), ms(r.publish.Pct(0.99)), r.publish.Errs, note(r.publish.FirstErr),
		r.readsPublishing.Rate(), ms(r.readsPublishing.Pct(0.99)), r.readsPublishing.Errs+r.readsAlone.Errs, note(cmp.Or(r.readsAlone.FirstErr, r.readsPublishing.FirstErr)))
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
			r.publish.Rate(), ratio(r.publish.Rate(), base.publish.Rate()),
			ms(r.publish.Pct(0.50)), ms(r.publish.Pct(0.99)),
			r.readsAlone.Rate(), ratio(r.readsAlone.Rate(), base.readsAlone.Rate()),
			ms(r.readsAlone.Pct(0.99)), ms(r.readsPublishing.Pct(0.99)),
			ratio(float64(r.readsPublishing.Pct(0.99)), float64(base.readsPublishing.Pct(0.99))),
			r.publish.Errs+r.readsAlone.Errs+r.readsPublishing.Errs)
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

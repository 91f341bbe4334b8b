package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

func (r *result) print(out io.Writer) {
	for _, e := range r.errs {
		fmt.Fprintf(out, "N=%d stopped or skipped a phase: %s\n", r.n, e)
	}
	fmt.Fprintln(out)
}

func ratio(a, b float64) string {
	if b == 0 || a == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func msOr(s *stats, p float64) string {
	if s == nil || s.N == 0 {
		return "–"
	}
	return ms(s.Pct(p))
}

func rps(s *stats) float64 {
	if s == nil {
		return 0
	}
	return s.Rate()
}

// seedPerK is the seeding time per 1,000 packages over the first and the last interval
// between marks, over HTTP.
func (r *result) seedPerK() (first, last string) {
	if len(r.marks) == 0 {
		return "–", "–"
	}
	per := func(a, b time.Duration, n int) string {
		return fmt.Sprintf("%.1f s", (b-a).Seconds()/float64(n)*1000)
	}
	m0 := r.marks[0]
	first = per(0, m0.At, m0.Done)
	if len(r.marks) == 1 {
		return first, first
	}
	a, b := r.marks[len(r.marks)-2], r.marks[len(r.marks)-1]
	return first, per(a.At, b.At, b.Done-a.Done)
}

// printSummary prints one Markdown table: a row per measurement, a column per size.
func printSummary(out io.Writer, z zero, all []*result) {
	if len(all) == 0 {
		return
	}
	head := []string{"measurement"}
	for _, r := range all {
		head = append(head, fmt.Sprintf("N=%d", r.n))
	}
	rows := [][]string{head, make([]string, len(head))}
	for i := range rows[1] {
		rows[1][i] = "---"
	}
	row := func(name string, f func(r *result) string) {
		line := []string{name}
		for _, r := range all {
			line = append(line, f(r))
		}
		rows = append(rows, line)
	}
	first := all[0]
	row("catalogue generated (files, MB)", func(r *result) string {
		return fmt.Sprintf("%d, %.1f MB in %.0f s", r.genFiles, float64(r.genBytes)/1e6, r.genTime.Seconds())
	})
	row("seeding mode", func(r *result) string { return r.seedMode })
	row("HTTP seeding, s per 1k: first / last interval", func(r *result) string {
		a, b := r.seedPerK()
		return a + " / " + b
	})
	row("HTTP seeding: plugins in the budget", func(r *result) string {
		if len(r.marks) == 0 {
			return "–"
		}
		m := r.marks[len(r.marks)-1]
		return fmt.Sprintf("%d in %.0f s", m.Done, m.At.Seconds())
	})
	row("baseline sha256sum+tar, 1 worker: /s (p50)", func(r *result) string { return fmt.Sprintf("%.1f (%s)", rps(r.base1), msOr(r.base1, .5)) })
	row("baseline, 16 workers: /s", func(r *result) string { return fmt.Sprintf("%.1f", rps(r.base16)) })
	row("publish, 1 client: /s, p50, p99", func(r *result) string {
		return fmt.Sprintf("%.1f, %s, %s", rps(r.pub1), msOr(r.pub1, .5), msOr(r.pub1, .99))
	})
	row("publish, 16 clients: /s, p50, p99", func(r *result) string {
		return fmt.Sprintf("%.1f, %s, %s", rps(r.pub16), msOr(r.pub16, .5), msOr(r.pub16, .99))
	})
	row("**publish/baseline throughput, 1 client** (target ≥ 0.3×)", func(r *result) string { return ratio(rps(r.pub1), rps(r.base1)) })
	row("**publish/baseline throughput, 16 clients** (target ≥ 0.3×)", func(r *result) string { return ratio(rps(r.pub16), rps(r.base16)) })
	row("publish 16 clients / 1 client throughput", func(r *result) string { return ratio(rps(r.pub16), rps(r.pub1)) })
	row(fmt.Sprintf("**publish p50 / p50 at N=%d** (target ≤ 1.5× at 50k)", first.n), func(r *result) string {
		if r.pub1 == nil || first.pub1 == nil {
			return "–"
		}
		return ratio(float64(r.pub1.Pct(.5)), float64(first.pub1.Pct(.5)))
	})
	row("index.json readers p99: alone / with a publisher", func(r *result) string { return msOr(r.readers, .99) + " / " + msOr(r.readersPub, .99) })
	row("**readers' p99 with/without a publisher** (target ≤ 1.2×)", func(r *result) string {
		if r.readers == nil || r.readersPub == nil {
			return "–"
		}
		return ratio(float64(r.readersPub.Pct(.99)), float64(r.readers.Pct(.99)))
	})
	row("index.json readers at ¼ of that rate, open loop, p99: alone / with a publisher", func(r *result) string {
		return msOr(r.readersRate, .99) + " / " + msOr(r.readersPubRate, .99)
	})
	row("**readers' p99 with/without a publisher, open loop at ¼ rate** (target ≤ 1.2×)", func(r *result) string {
		if r.readersRate == nil || r.readersPubRate == nil {
			return "–"
		}
		return ratio(float64(r.readersPubRate.Pct(.99)), float64(r.readersRate.Pct(.99)))
	})
	row("publishes during the readers phase", func(r *result) string {
		if r.pubDuringReaders == nil {
			return "–"
		}
		return fmt.Sprintf("%d (p50 %s)", r.pubDuringReaders.N, msOr(r.pubDuringReaders, .5))
	})
	for k, p := range pages() {
		row("page "+p.name+" p50 / p99", func(r *result) string {
			if k >= len(r.pages) {
				return "–"
			}
			s := r.pages[k].s
			size := int64(0)
			if s.N > 0 {
				size = s.Bytes / s.N
			}
			return fmt.Sprintf("%s / %s (%d KB)", msOr(s, .5), msOr(s, .99), size>>10)
		})
	}
	row("**worst page p99** (target < 50 ms at 50k; search < 20 ms)", func(r *result) string {
		var worst time.Duration
		name := "–"
		for _, p := range r.pages[min(1, len(r.pages)):] {
			if d := p.s.Pct(.99); d > worst {
				worst, name = d, p.name
			}
		}
		return ms(worst) + " (" + name + ")"
	})
	row(fmt.Sprintf("idle RSS: empty registry %.1f MiB → N listed, none stored → N stored", mib(z.rss)), func(r *result) string {
		return fmt.Sprintf("%.1f → %.1f MiB", mib(r.emptyRSS), mib(r.rss))
	})
	row("**idle RSS per 1,000 plugins** (over the empty registry)", func(r *result) string {
		if r.rss == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f MiB", mib(r.rss-z.rss)/float64(r.n)*1000)
	})
	row("peak RSS (VmHWM) at the end", func(r *result) string { return fmt.Sprintf("%.1f MiB", mib(r.peak)) })
	row("**cold start** (exec → /readyz 200; target < 2 s at 50k)", func(r *result) string {
		if r.cold == 0 {
			return "did not start"
		}
		return fmt.Sprintf("%s (%s of the empty registry's %s; N listed, none stored: %s)", ms(r.cold),
			ratio(float64(r.cold), float64(z.cold)), ms(z.cold), ms(r.emptyCold))
	})
	row("**cold start, plugins.yaml checked again** (a deploy: list or binary changed; target < 2 s at 50k)", func(r *result) string {
		if r.coldUncached == 0 {
			return "–"
		}
		return ms(r.coldUncached)
	})
	row("readyz at start: status, entries", func(r *result) string { return fmt.Sprintf("%s, %d", r.readyStatus, r.readyEntries) })
	row("index.json bytes (gzip bytes)", func(r *result) string { return fmt.Sprintf("%d (%d)", r.indexBytes, r.gzBytes) })
	row("index.json gzip req/s: registry / nginx gzip_static", func(r *result) string {
		return fmt.Sprintf("%.0f / %.0f", rps(r.gzipReg), rps(r.gzipNginx))
	})
	row("**gzip registry/nginx** (target ≥ 0.8×)", func(r *result) string {
		if r.gzipSpread != "" {
			return ratio(rps(r.gzipReg), rps(r.gzipNginx)) + " (median; " + r.gzipSpread + ")"
		}
		return ratio(rps(r.gzipReg), rps(r.gzipNginx))
	})
	row("gzip p99: registry / nginx", func(r *result) string { return msOr(r.gzipReg, .99) + " / " + msOr(r.gzipNginx, .99) })
	row("phases that failed", func(r *result) string {
		if len(r.errs) == 0 {
			return "none"
		}
		return strings.ReplaceAll(strings.Join(r.errs, "; "), "|", "/")
	})
	fmt.Fprintln(out, "## summary")
	for _, line := range rows {
		fmt.Fprintln(out, "| "+strings.Join(line, " | ")+" |")
	}
}

package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pluginyard/registry/store"
)

// migrateProgress prints a copy's progress on stderr: a line when the phase or the table
// changes, and at most one a second within one.
type migrateProgress struct {
	w     io.Writer
	now   func() time.Time
	last  store.CopyProgress
	shown time.Time
	dirty bool
}

func newMigrateProgress(w io.Writer) *migrateProgress {
	return &migrateProgress{w: w, now: time.Now}
}

func (m *migrateProgress) report(p store.CopyProgress) {
	changed := p.Phase != m.last.Phase || p.Table != m.last.Table
	if changed && m.dirty {
		m.print(m.last) // the last count of the phase or table that ended
	}
	m.last, m.dirty = p, true
	if changed || m.now().Sub(m.shown) >= time.Second {
		m.print(p)
	}
}

// flush prints the last state when it was not printed.
func (m *migrateProgress) flush() {
	if m.dirty {
		m.print(m.last)
	}
}

func (m *migrateProgress) print(p store.CopyProgress) {
	m.shown, m.dirty = m.now(), false
	switch p.Phase {
	case "blobs", "verify blobs":
		fmt.Fprintf(m.w, "migrate: %s %d/%d (%s/%s)\n", p.Phase, p.Blobs, p.BlobsTotal, megabytes(p.Bytes), megabytes(p.BytesTotal))
	case "rows":
		fmt.Fprintf(m.w, "migrate: rows of %s (%d rows so far)\n", p.Table, p.Rows)
	case "verify rows":
		fmt.Fprintf(m.w, "migrate: verified %s\n", p.Table)
	}
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// printMigrateReport is the summary of a verified copy.
func printMigrateReport(w io.Writer, from, to store.CopyEnd, rep *store.CopyReport) {
	var rows, inserted int64
	for _, t := range rep.Tables {
		rows += t.Rows
		inserted += t.Inserted
	}
	resumed := ""
	if rep.Resumed {
		resumed = " (resumed)"
	}
	fmt.Fprintf(w, "migrated %s to %s, verified%s\n", redact(from.Database), redact(to.Database), resumed)
	fmt.Fprintf(w, "  tables  %d, %d rows (%d inserted by this run)\n", len(rep.Tables), rows, inserted)
	for _, t := range rep.Tables {
		fmt.Fprintf(w, "    %-20s %8d rows\n", t.Name, t.Rows)
	}
	if len(rep.Derived) > 0 {
		fmt.Fprintf(w, "  not copied (the first registry serve rebuilds them): %s\n", strings.Join(rep.Derived, ", "))
	}
	fmt.Fprintf(w, "  blobs   %d, %s (%d copied, %s; %d already present)\n", rep.Blobs, megabytes(rep.Bytes), rep.BlobsCopied, megabytes(rep.BytesCopied), rep.BlobsSkipped)
	if len(rep.Sequences) > 0 {
		fmt.Fprintf(w, "  sequences set past the copied ids: %s\n", strings.Join(rep.Sequences, ", "))
	}
	fmt.Fprintf(w, "  took %s: rows %s (%s), blobs %s (%s), verification %s\n", rep.Elapsed.Round(time.Millisecond),
		rep.RowTime.Round(time.Millisecond), rate(float64(inserted), rep.RowTime, "rows/s"),
		rep.BlobTime.Round(time.Millisecond), rate(float64(rep.BytesCopied)/1e6, rep.BlobTime, "MB/s"),
		rep.VerifyTime.Round(time.Millisecond))
}

// rate is n per second of d, with its unit.
func rate(n float64, d time.Duration, unit string) string {
	if d <= 0 {
		return "- " + unit
	}
	return fmt.Sprintf("%.0f %s", n/d.Seconds(), unit)
}

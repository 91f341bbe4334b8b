package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pluginyard/registry/store"
)

// fsckReport is the --json output of `registry fsck`.
type fsckReport struct {
	Blobs    int                 `json:"blobs"`
	Bytes    int64               `json:"bytes"`
	Problems []store.BlobProblem `json:"problems"`
	// Database lists what SQLite's quick_check found wrong in the database's pages.
	Database []string `json:"database"`
}

var fsckHelp = help{
	Summary: "re-hash every blob against the database; report missing, corrupt and orphan blobs",
	Usage:   "registry fsck [--data DIR] [--database URL] [--blobs URL] [--json]",
	About: `Reads every blob of the blob store (--blobs; the data directory's by default), compares its sha256 and size with the database, and
lists the missing, corrupt, unreadable and orphan ones with the releases that use them. On SQLite it also reads every page
of the database (quick_check) and lists the damage it finds.
It only reads, so it may run beside ` + "`registry serve`" + `; progress goes to stderr.
Exit status: 0 when every blob matches and the database is sound, 1 when there is a problem, 2 on usage or I/O errors.`,
	Example: "registry fsck --data /var/lib/registry",
}

// cmdFsck is `registry fsck [--data DIR] [--json]`: re-hash every blob against the database
// and report missing, corrupt and orphan blobs; exit 1 when there is any. It only reads, so
// it may run beside `registry serve`.
func cmdFsck(ctx context.Context, c *cli, args []string) int {
	fs := c.flags("fsck")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	st, blobs, pos, code := openBackends(ctx, c, fs, args)
	if st == nil {
		return code
	}
	defer st.Close()
	if len(pos) > 0 {
		return c.usageError("fsck", "expected no argument, found %q", strings.Join(pos, " "))
	}
	var last store.BlobProgress
	progress := fsckProgress(c.stderr, time.Now, 2*time.Second)
	probs, err := st.CheckBlobsIn(ctx, blobs, func(p store.BlobProgress) { last = p; progress(p) })
	if err != nil {
		fmt.Fprintf(c.stderr, "fsck: %v\n", err)
		return exitUsage
	}
	dbProbs, err := st.CheckDatabase(ctx)
	if err != nil {
		fmt.Fprintf(c.stderr, "fsck: %v\n", err)
		return exitUsage
	}
	rep := fsckReport{Blobs: last.Total, Bytes: last.TotalBytes, Problems: probs, Database: dbProbs}
	if *asJSON {
		if code := writeJSON(c.stdout, rep); code != exitOK {
			return code
		}
	} else {
		printFsck(c.stdout, rep)
	}
	if len(probs) > 0 || len(dbProbs) > 0 {
		return exitInvalid
	}
	return exitOK
}

// fsckProgress returns a progress callback that prints at most one line per interval, and
// always the last one, so long runs show life without flooding the terminal.
func fsckProgress(w io.Writer, now func() time.Time, every time.Duration) func(store.BlobProgress) {
	var next time.Time
	return func(p store.BlobProgress) {
		if t := now(); p.Done == p.Total || !t.Before(next) {
			next = t.Add(every)
			fmt.Fprintf(w, "fsck: %d/%d blobs, %s of %s re-hashed\n", p.Done, p.Total, humanBytes(p.Bytes), humanBytes(p.TotalBytes))
		}
	}
}

func printFsck(w io.Writer, rep fsckReport) {
	if len(rep.Database) > 0 {
		fmt.Fprintf(w, "fsck: the database is damaged (SQLite quick_check):\n")
		for _, p := range rep.Database {
			fmt.Fprintf(w, "  %s\n", p)
		}
		fmt.Fprintf(w, "  restore it from a backup with the registry stopped (registry restore --force SNAPSHOT), then run fsck again\n")
	}
	counts := map[string]int{}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, p := range rep.Problems {
		counts[p.Kind]++
		uses := make([]string, len(p.Uses))
		for i, u := range p.Uses {
			uses[i] = u.String()
		}
		if len(uses) == 0 {
			uses = []string{"no release"}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Kind, p.SHA256, strings.Join(uses, ", "), p.Detail)
	}
	_ = tw.Flush()
	if len(rep.Problems) == 0 {
		fmt.Fprintf(w, "fsck: %d blobs (%s) checked; every one matches its sha256 and size\n", rep.Blobs, humanBytes(rep.Bytes))
		return
	}
	var parts []string
	for _, k := range []string{store.BlobMissing, store.BlobCorrupt, store.BlobUnreadable, store.BlobOrphan} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	fmt.Fprintf(w, "fsck: %d blobs (%s) checked: %s.\n", rep.Blobs, humanBytes(rep.Bytes), strings.Join(parts, ", "))
	for _, a := range fsckAdvice(rep.Problems) {
		fmt.Fprintf(w, "  %s\n", a)
	}
}

// fsckAdvice says what to do about each kind of problem found, once per kind.
func fsckAdvice(probs []store.BlobProblem) []string {
	var damaged, unrecorded, unused bool
	for _, p := range probs {
		switch {
		case p.Kind != store.BlobOrphan:
			damaged = true
		case p.Recorded:
			unused = true
		default:
			unrecorded = true
		}
	}
	var out []string
	if damaged {
		out = append(out, "Restore a missing or corrupt blob from a backup of the blobs folder (any copy with the same sha256 is the same file).")
	}
	if unrecorded {
		out = append(out, fmt.Sprintf("An orphan the database does not record (an interrupted publish leaves one) is removed by the next `registry serve`: at once on the embedded default (SQLite and the data directory's blobs folder), otherwise once it is older than %s (replicas may share the store).", SweepMinAge))
	}
	if unused {
		out = append(out, "An orphan the database records but nothing uses (a second copy of a preview, which earlier versions recorded) is harmless: nothing removes it, and removing the file by hand is safe.")
	}
	return out
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

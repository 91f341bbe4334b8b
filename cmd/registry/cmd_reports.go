package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
)

var reportsHelp = help{
	Summary: "list and resolve the reports people filed against packages",
	Usage: "registry reports list [--open] [--package ID] [--json] [--data DIR]\n" +
		"registry reports resolve ID --resolution TEXT [--action none|yanked|quarantined|deprecated] [--data DIR]",
	About: `Anyone may report a package (or one version) as malicious, broken or other, from its
page or with POST /api/v1/plugins/{id}/reports. list shows reports newest first: the
reporter is a keyed hash of their address (equal hashes are one address), never the
address. resolve closes a report with a one-line text and the action it led to; the action
is taken with its own command first (registry yank, registry quarantine, or the deprecate
API), resolve records it. A resolution whose action is not none is shown on the package's
page ("Reported as malicious on DATE; resolved: quarantined — TEXT"). Both are audited.
See docs/reports.md.
` + besideServe + `
Exit status: 0 when done, 1 when resolve is refused (unknown id, already resolved, bad
text or action; the rule ids are printed), 2 on usage or I/O errors.`,
	Example: "registry reports list --open\n" +
		"registry reports resolve 12 --resolution \"confirmed: 1.0.0 posts tokens to a remote host\" --action yanked",
}

// reportsActions are reports' actions, in help order.
var reportsActions = []string{"list", "resolve"}

// reportsOptions are the flags of one reports action.
type reportsOptions struct {
	open, asJSON       *bool
	pkg                *string
	resolution, action *string
}

// reportsFlags declares the flags of reports action (without --data).
func reportsFlags(c *cli, action string) (*flag.FlagSet, reportsOptions) {
	fs := c.flags("reports " + action)
	var o reportsOptions
	switch action {
	case "list":
		o.open = fs.Bool("open", false, "only reports not yet resolved")
		o.pkg = fs.String("package", "", "only the reports of package `ID`")
		o.asJSON = fs.Bool("json", false, "print JSON")
	case "resolve":
		o.resolution = fs.String("resolution", "", "what was found and done, one line (`TEXT`, at most 1 KiB); required")
		o.action = fs.String("action", "none", "the action taken: `ACTION` none, yanked, quarantined or deprecated")
	}
	return fs, o
}

// cmdReports is `registry reports list|resolve`.
func cmdReports(ctx context.Context, c *cli, args []string) int {
	switch {
	case len(args) == 0:
		return c.usageError("reports", "expected an action: list or resolve")
	case isHelp(args[0]):
		sets := make([]*flag.FlagSet, 0, len(reportsActions))
		for _, a := range reportsActions {
			fs, _ := reportsFlags(c, a)
			dataFlag(c, fs)
			sets = append(sets, fs)
		}
		printHelp(c.stdout, "reports", reportsHelp, sets...)
		return exitOK
	case !slices.Contains(reportsActions, args[0]):
		return c.usageError("reports", "unknown action %q%s; expected list or resolve", args[0], suggest(args[0], reportsActions))
	}
	fs, o := reportsFlags(c, args[0])
	st, pos, code := openStore(ctx, c, fs, args[1:])
	if st == nil {
		return code
	}
	defer st.Close()
	if args[0] == "list" {
		if len(pos) > 0 {
			return c.usageError("reports list", "expected no argument, found %q", strings.Join(pos, " "))
		}
		return reportsList(ctx, c, st, o)
	}
	return reportsResolve(ctx, c, st, pos, o)
}

func reportsList(ctx context.Context, c *cli, st *store.Store, o reportsOptions) int {
	rs, err := st.Reports(ctx, store.ReportQuery{OpenOnly: *o.open, PackageID: *o.pkg})
	if err != nil {
		fmt.Fprintf(c.stderr, "reports list: %v\n", err)
		return exitUsage
	}
	if *o.asJSON {
		return writeJSON(c.stdout, rs)
	}
	tw := newTable(c.stdout, "ID\tPACKAGE\tKIND\tREPORTED\tREPORTER\tSTATE\tREASON")
	for _, r := range rs {
		state := "open"
		if r.Resolution != nil {
			state = "resolved: " + r.Resolution.Action
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, store.TargetName(r.PackageID, r.Version), r.Kind, r.CreatedAt.Format(time.RFC3339),
			r.ReporterHash, state, oneLine(r.Reason, 60))
	}
	if err := tw.Flush(); err != nil {
		return exitUsage
	}
	return exitOK
}

// newTable is the list commands' table on w (two spaces between columns), its header
// line written; Flush prints it.
func newTable(w io.Writer, header string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	return tw
}

// oneLine shows a reason in a table cell: control characters (a reason may hold newlines
// and tabs) become spaces, and it is cut at max runes.
func oneLine(s string, limit int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > limit {
		return string(r[:limit]) + "…"
	}
	return s
}

func reportsResolve(ctx context.Context, c *cli, st *store.Store, pos []string, o reportsOptions) int {
	if len(pos) != 1 {
		return c.usageError("reports resolve", "expected one report ID (see `registry reports list --open`), found %d arguments", len(pos))
	}
	id, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil || id <= 0 {
		return c.usageError("reports resolve", "report ID %q is not a positive whole number (see `registry reports list --open`)", pos[0])
	}
	if *o.resolution == "" {
		return c.usageError("reports resolve", "--resolution TEXT is required: say what was found and done")
	}
	r, err := ingest.ResolveReport(ctx, st, "cli", id, *o.resolution, *o.action)
	var rf *ingest.Refusal
	if errors.As(err, &rf) {
		fmt.Fprintf(c.stderr, "reports resolve: %s\n", rf.Message)
		printProblems(c.stderr, rf.Problems)
		return exitInvalid
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "reports resolve: %v\n", err)
		return exitUsage
	}
	shown := "not shown on the package page (action none)"
	if r.Resolution.Action != "none" {
		shown = "shown on the page of " + r.PackageID
	}
	fmt.Fprintf(c.stdout, "resolved report %d of %s: %s; %s\n", r.ID, store.TargetName(r.PackageID, r.Version), r.Resolution.Action, shown)
	return exitOK
}

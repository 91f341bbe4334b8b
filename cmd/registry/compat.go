package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
)

var compatHelp = help{
	Summary: "narrow a release's Kandev host range in a data directory, with the server stopped",
	Usage: "registry compat set [--data DIR] --max-kandev VERSION --reason TEXT ID@VERSION\n" +
		"registry compat clear [--data DIR] ID@VERSION",
	About: `Curates compatibility after the fact, without a running server: ` + "`set`" + ` stops offering
ID@VERSION to Kandev hosts newer than --max-kandev (inclusive) in every host-aware index
(/kandev/{host_version}/{platform}/index.json) and the compatibility and upgrade answers;
` + "`clear`" + ` removes the curation. It only narrows: the manifest's min_kandev_version stays
the lower bound, and a --max-kandev below it, or below the first host version that installs
the release at all, is refused (rules compat.max_kandev.below_min, compat.max_kandev.no_host;
yank the release to withdraw it from every host). A clear of a release without a curation
changes nothing and says so. The change shows at the next start of
` + "`registry serve`" + `; it refuses while the server holds the data directory (use
POST /api/v1/admin/compat/{id}/versions/{version} then). Recorded in the audit log with
actor "cli". See docs/host-aware.md.
Exit status: 0 when done, 1 when the release is not stored, the curation is refused or the
data directory is in use, 2 on usage or I/O errors.`,
	Example: "registry compat set --data /var/lib/registry --max-kandev 0.93.4 --reason \"crashes on the 0.94 task API\" acme-hello@1.2.0\n" +
		"registry compat clear --data /var/lib/registry acme-hello@1.2.0",
}

// compatActions are the subcommands of compat, in the order its help lists them.
var compatActions = []string{"set", "clear"}

// compatFlags is the FlagSet of `compat set` or `compat clear` without --data (openOffline
// adds it), with set's --max-kandev and --reason.
func compatFlags(c *cli, action string) (fs *flag.FlagSet, maxKandev, reason *string) {
	fs = c.flags("compat " + action)
	if action == "set" {
		maxKandev = fs.String("max-kandev", "", "newest Kandev `VERSION` still offered the release (SemVer, inclusive)")
		reason = fs.String("reason", "", "why (`TEXT`, one line), shown to hosts and on the plugin page")
	}
	return fs, maxKandev, reason
}

// printCompatHelp prints compat's help with the flags of each subcommand.
func printCompatHelp(c *cli) int {
	sets := make([]*flag.FlagSet, 0, len(compatActions))
	for _, a := range compatActions {
		fs, _, _ := compatFlags(c, a)
		dataFlag(c, fs)
		sets = append(sets, fs)
	}
	printHelp(c.stdout, "compat", compatHelp, sets...)
	return exitOK
}

// cmdCompat is `registry compat set|clear ID@VERSION`, offline.
func cmdCompat(ctx context.Context, c *cli, args []string) int {
	if len(args) > 0 && isHelp(args[0]) {
		return printCompatHelp(c)
	}
	if len(args) == 0 {
		return c.usageError("compat", "expected a subcommand: set or clear")
	}
	if args[0] != "set" && args[0] != "clear" {
		return c.usageError("compat", "unknown subcommand %q; want set or clear", truncateArg(args[0]))
	}
	if args[0] == "clear" {
		return compatClear(ctx, c, args[1:])
	}
	return compatSet(ctx, c, args[1:])
}

func compatSet(ctx context.Context, c *cli, args []string) int {
	fs, maxKandev, reason := compatFlags(c, "set")
	st, pos, code := openOffline(ctx, c, fs, args)
	if st == nil {
		return code
	}
	defer st.Close()
	id, ver, ok := splitRelease(pos)
	if !ok {
		return c.usageError("compat", "expected one ID@VERSION, such as acme-hello@1.2.0; got %q", strings.Join(pos, " "))
	}
	svc := ingest.New(st.Store, nil, ingest.Config{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer svc.Close()
	cur, err := svc.SetCompatOffline(ctx, "cli", id, ver, *maxKandev, *reason)
	if err != nil {
		return compatFailed(c, "compat set", err)
	}
	fmt.Fprintf(c.stdout, "curated %s@%s for Kandev up to %s; host-aware indexes change at the next start of `registry serve`\n", id, ver, cur.MaxKandev)
	return exitOK
}

func compatClear(ctx context.Context, c *cli, args []string) int {
	fs, _, _ := compatFlags(c, "clear")
	st, pos, code := openOffline(ctx, c, fs, args)
	if st == nil {
		return code
	}
	defer st.Close()
	id, ver, ok := splitRelease(pos)
	if !ok {
		return c.usageError("compat", "expected one ID@VERSION, such as acme-hello@1.2.0; got %q", strings.Join(pos, " "))
	}
	audit := store.AuditEntry{Actor: "cli", Action: "compat_clear", Target: id + "@" + ver, Outcome: "ok", Detail: map[string]any{"offline": true}}
	had, err := st.ClearCompat(ctx, id, ver, audit)
	if errors.Is(err, store.ErrNotFound) {
		fmt.Fprintf(c.stderr, "compat clear: %s@%s is not stored in %s; %s\n", id, ver, st.Dir(), storedVersions(ctx, st, id))
		return exitInvalid
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "compat clear: %v\n", err)
		return exitUsage
	}
	if !had {
		fmt.Fprintf(c.stdout, "%s@%s had no curation; nothing changed\n", id, ver)
		return exitOK
	}
	fmt.Fprintf(c.stdout, "cleared the curation of %s@%s; its manifest's range applies at the next start of `registry serve`\n", id, ver)
	return exitOK
}

// compatFailed prints a refused or failed curation: the refusal's problems with their
// rules, exit 1; anything else exit 2.
func compatFailed(c *cli, name string, err error) int {
	var rf *ingest.Refusal
	if !errors.As(err, &rf) {
		fmt.Fprintf(c.stderr, "%s: %v\n", name, err)
		return exitUsage
	}
	fmt.Fprintf(c.stderr, "%s: %s\n", name, rf.Message)
	for _, p := range rf.Problems {
		fmt.Fprintf(c.stderr, "  [%s] %s\n", p.Rule, p.Path)
	}
	return exitInvalid
}

// truncateArg shortens an argument for a usage message.
func truncateArg(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
)

var quarantineHelp = help{
	Summary: "quarantine a package or one release with a public reason, release it, or list them",
	Usage: "registry quarantine set [--data DIR] --reason TEXT ID[@VERSION]\n" +
		"registry quarantine release [--data DIR] ID[@VERSION]\n" +
		"registry quarantine list [--json] [--data DIR]",
	About: "`set` takes a whole package (ID) or one release (ID@VERSION) out of reach without\n" +
		"deleting anything: it leaves index.json, its shards, the host-aware documents, search and\n" +
		"the listings; its downloads answer 410 Gone with the reason (rule quarantine.download);\n" +
		"no token may publish it (publish.quarantined); its page stays and shows the reason; its\n" +
		"package document (/api/v1/index/ID.json) lists it under state.quarantined. --reason is\n" +
		"required and public: one line, at most 500 characters (rule quarantine.reason); a `set`\n" +
		"of a target already quarantined replaces the reason. `release` ends the quarantine and\n" +
		"restores everything exactly; a release of what is not quarantined changes nothing and\n" +
		"says so. Both are recorded in the audit log (actor \"cli\"), the change feed and the\n" +
		"transparency log. `set` and `release` change the data directory with the server stopped\n" +
		"(they show at the next start of `registry serve`) and refuse while it holds it: with the\n" +
		"server running, use POST /api/v1/admin/quarantine/{id}[/versions/{version}] {\"reason\"}\n" +
		"and .../release, which take effect at once. `list` runs beside the server.\n" +
		"See docs/quarantine.md.\n" +
		"Exit status: 0 when done, 1 when the target is not stored, the reason is refused or the\n" +
		"data directory is in use, 2 on usage or I/O errors.",
	Example: "registry quarantine set --data /var/lib/registry --reason \"a leaked token published a credential stealer\" acme-hello@1.2.0\n" +
		"registry quarantine release --data /var/lib/registry acme-hello@1.2.0\n" +
		"registry quarantine list --data /var/lib/registry",
}

// quarantineActions are the subcommands of quarantine, in the order its help lists them.
var quarantineActions = []string{"set", "release", "list"}

// quarantineFlags is the FlagSet of one subcommand without --data (its opener adds it).
func quarantineFlags(c *cli, action string) (fs *flag.FlagSet, reason *string, asJSON *bool) {
	fs = c.flags("quarantine " + action)
	switch action {
	case "set":
		reason = fs.String("reason", "", "why, publicly (`TEXT`, one line, at most 500 characters), shown on the page and in the 410")
	case "list":
		asJSON = fs.Bool("json", false, "print JSON")
	}
	return fs, reason, asJSON
}

func printQuarantineHelp(c *cli) int {
	sets := make([]*flag.FlagSet, 0, len(quarantineActions))
	for _, a := range quarantineActions {
		fs, _, _ := quarantineFlags(c, a)
		dataFlag(c, fs)
		sets = append(sets, fs)
	}
	printHelp(c.stdout, "quarantine", quarantineHelp, sets...)
	return exitOK
}

// cmdQuarantine is `registry quarantine set|release|list`.
func cmdQuarantine(ctx context.Context, c *cli, args []string) int {
	if len(args) > 0 && isHelp(args[0]) {
		return printQuarantineHelp(c)
	}
	if len(args) == 0 {
		return c.usageError("quarantine", "expected a subcommand: set, release or list")
	}
	switch args[0] {
	case "set":
		return quarantineSet(ctx, c, args[1:])
	case "release":
		return quarantineRelease(ctx, c, args[1:])
	case "list":
		return quarantineList(ctx, c, args[1:])
	}
	return c.usageError("quarantine", "unknown subcommand %q; want set, release or list", truncateArg(args[0]))
}

// splitTarget reads ID or ID@VERSION (the last "@" splits, so a scoped extension name
// @scope/name keeps its leading one); version is "" for a whole package.
func splitTarget(pos []string) (id, version string, ok bool) {
	if len(pos) != 1 || pos[0] == "" {
		return "", "", false
	}
	i := strings.LastIndex(pos[0], "@")
	if i <= 0 {
		return pos[0], "", true
	}
	if i == len(pos[0])-1 {
		return "", "", false
	}
	return pos[0][:i], pos[0][i+1:], true
}

func targetName(id, version string) string {
	if version == "" {
		return id
	}
	return id + "@" + version
}

func quarantineSet(ctx context.Context, c *cli, args []string) int {
	fs, reason, _ := quarantineFlags(c, "set")
	st, pos, code := openOffline(ctx, c, fs, args)
	if st == nil {
		return code
	}
	defer st.Close()
	id, version, ok := splitTarget(pos)
	if !ok {
		return c.usageError("quarantine", "expected one ID or ID@VERSION, such as acme-hello or acme-hello@1.2.0; got %q", strings.Join(pos, " "))
	}
	if err := ingest.CheckQuarantineReason(*reason); err != nil {
		return compatFailed(c, "quarantine set", err)
	}
	q := store.Quarantine{PackageID: id, Version: version, Reason: *reason, SetBy: "cli"}
	audit := store.AuditEntry{Actor: "cli", Action: "quarantine", Target: q.Target(), Outcome: "ok", Detail: map[string]any{"reason": *reason, "offline": true}}
	err := st.SetQuarantine(ctx, q, audit)
	if errors.Is(err, store.ErrNotFound) {
		fmt.Fprintf(c.stderr, "quarantine set: %s is not stored in %s; %s\n", q.Target(), st.Dir(), storedVersions(ctx, st, id))
		return exitInvalid
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "quarantine set: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(c.stdout, "quarantined %s: it leaves the index and its downloads answer 410 at the next start of `registry serve`\n", q.Target())
	return exitOK
}

func quarantineRelease(ctx context.Context, c *cli, args []string) int {
	fs, _, _ := quarantineFlags(c, "release")
	st, pos, code := openOffline(ctx, c, fs, args)
	if st == nil {
		return code
	}
	defer st.Close()
	id, version, ok := splitTarget(pos)
	if !ok {
		return c.usageError("quarantine", "expected one ID or ID@VERSION, such as acme-hello or acme-hello@1.2.0; got %q", strings.Join(pos, " "))
	}
	target := targetName(id, version)
	audit := store.AuditEntry{Actor: "cli", Action: "unquarantine", Target: target, Outcome: "ok", Detail: map[string]any{"offline": true}}
	had, err := st.ReleaseQuarantine(ctx, id, version, audit)
	if err != nil {
		fmt.Fprintf(c.stderr, "quarantine release: %v\n", err)
		return exitUsage
	}
	if !had {
		fmt.Fprintf(c.stdout, "%s is not quarantined; nothing changed (`registry quarantine list` shows what is)\n", target)
		return exitOK
	}
	fmt.Fprintf(c.stdout, "released the quarantine of %s: it is back in the index at the next start of `registry serve`\n", target)
	return exitOK
}

func quarantineList(ctx context.Context, c *cli, args []string) int {
	fs, _, asJSON := quarantineFlags(c, "list")
	st, pos, code := openStore(ctx, c, fs, args)
	if st == nil {
		return code
	}
	defer st.Close()
	if len(pos) > 0 {
		return c.usageError("quarantine", "list takes no argument, found %q", strings.Join(pos, " "))
	}
	qs, err := st.Quarantines(ctx)
	if err != nil {
		fmt.Fprintf(c.stderr, "quarantine list: %v\n", err)
		return exitUsage
	}
	if *asJSON {
		return writeJSON(c.stdout, qs)
	}
	if len(qs) == 0 {
		fmt.Fprintln(c.stdout, "nothing is quarantined")
		return exitOK
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tSINCE\tBY\tREASON")
	for _, q := range qs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", q.Target(), q.SetAt.Format(time.RFC3339), q.SetBy, q.Reason)
	}
	_ = tw.Flush()
	return exitOK
}

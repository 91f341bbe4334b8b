package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
)

var blocklistHelp = help{
	Summary: "block package or file sha256 digests from being published",
	Usage:   "registry blocklist add SHA256 --reason TEXT [--data DIR]\nregistry blocklist remove SHA256 [--data DIR]\nregistry blocklist list [--json] [--data DIR]",
	About: `add puts a sha256 on the blocklist: publish then refuses a package whose bytes have it
(scan.blocklist.package) or that holds a file with it (scan.blocklist.file), whatever its
id or version; the reason is shown to the author. A second add replaces the reason.
remove takes it off; list shows every entry. Each change is audited (blocklist.add,
blocklist.remove). Releases published before the block stay; quarantine them.
` + besideServe + ` The server reads the blocklist at every publish, so a change
is in force at once.

Exit status: 0 when done, 1 when remove finds no such entry or add refuses the digest or
reason, 2 on usage or I/O errors.`,
	Example: "registry blocklist add 3f1e…9c2a --reason \"credential stealer, advisory 2026-11\"\nregistry blocklist list\nregistry blocklist remove 3f1e…9c2a",
}

var blocklistActions = []string{"add", "remove", "list"}

type blocklistOptions struct {
	reason *string
	asJSON *bool
}

func blocklistFlags(c *cli, action string) (*flag.FlagSet, blocklistOptions) {
	fs := c.flags("blocklist " + action)
	var o blocklistOptions
	switch action {
	case "add":
		o.reason = fs.String("reason", "", "why the digest is blocked (`TEXT`, at most 500 characters); shown to the author; required")
	case "list":
		o.asJSON = fs.Bool("json", false, "print JSON")
	}
	return fs, o
}

func printBlocklistHelp(c *cli) int {
	sets := make([]*flag.FlagSet, 0, len(blocklistActions))
	for _, a := range blocklistActions {
		fs, _ := blocklistFlags(c, a)
		dataFlag(c, fs)
		sets = append(sets, fs)
	}
	printHelp(c.stdout, "blocklist", blocklistHelp, sets...)
	return exitOK
}

// cmdBlocklist is `registry blocklist add|remove|list`.
func cmdBlocklist(ctx context.Context, c *cli, args []string) int {
	switch {
	case len(args) == 0:
		return c.usageError("blocklist", "expected an action: add, remove or list")
	case isHelp(args[0]):
		return printBlocklistHelp(c)
	case !slices.Contains(blocklistActions, args[0]):
		return c.usageError("blocklist", "unknown action %q%s; expected add, remove or list", args[0], suggest(args[0], blocklistActions))
	}
	action := args[0]
	fs, o := blocklistFlags(c, action)
	st, pos, code := openStore(ctx, c, fs, args[1:])
	if st == nil {
		return code
	}
	defer st.Close()
	if action == "list" {
		if len(pos) > 0 {
			return c.usageError("blocklist list", "expected no argument, found %d", len(pos))
		}
		return blocklistList(ctx, c, st, *o.asJSON)
	}
	if len(pos) != 1 {
		return c.usageError("blocklist "+action, "expected one SHA256 (64 hex digits, as `sha256sum` prints it), found %d arguments", len(pos))
	}
	if action == "add" {
		return blocklistAdd(ctx, c, st, pos[0], *o.reason)
	}
	return blocklistRemove(ctx, c, st, pos[0])
}

func blocklistAdd(ctx context.Context, c *cli, st *store.Store, sha, reason string) int {
	b, added, err := ingest.AddBlock(ctx, st, "cli", sha, reason)
	var r *ingest.Refusal
	switch {
	case errors.As(err, &r):
		fmt.Fprintf(c.stderr, "blocklist add: %s\n", r.Message)
		return exitInvalid
	case err != nil:
		fmt.Fprintf(c.stderr, "blocklist add: %v\n", err)
		return exitUsage
	}
	what := "blocked"
	if !added {
		what = "replaced the reason of"
	}
	fmt.Fprintf(c.stdout, "%s %s: %s\n", what, b.SHA256, b.Reason)
	return exitOK
}

func blocklistRemove(ctx context.Context, c *cli, st *store.Store, sha string) int {
	err := ingest.RemoveBlock(ctx, st, "cli", sha)
	var r *ingest.Refusal
	switch {
	case errors.As(err, &r):
		fmt.Fprintf(c.stderr, "blocklist remove: %s\n", r.Message)
		return exitInvalid
	case err != nil:
		fmt.Fprintf(c.stderr, "blocklist remove: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(c.stdout, "unblocked %s\n", sha)
	return exitOK
}

func blocklistList(ctx context.Context, c *cli, st *store.Store, asJSON bool) int {
	list, err := st.Blocks(ctx)
	if err != nil {
		fmt.Fprintf(c.stderr, "blocklist list: %v\n", err)
		return exitUsage
	}
	if asJSON {
		return writeJSON(c.stdout, list)
	}
	tw := newTable(c.stdout, "SHA256\tADDED\tBY\tREASON")
	for _, b := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", b.SHA256, b.AddedAt.Format(time.RFC3339), b.AddedBy, b.Reason)
	}
	_ = tw.Flush()
	return exitOK
}

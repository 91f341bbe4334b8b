package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/pluginyard/registry/store"
)

var yankHelp = help{
	Summary: "yank ID@VERSION in a data directory, with the server stopped",
	Usage:   "registry yank [--data DIR] [--reason TEXT] ID@VERSION",
	About: `Yanks a release in the database of a data directory, without a running server: the version
leaves "latest" and the index at the next rebuild (the next start of ` + "`registry serve`" + `)
and stays downloadable by its exact URL. Use it when a stored release keeps the index from
building (/readyz says "degraded" and names the releases to look at). It refuses while
` + "`registry serve`" + ` holds the data directory: with the server running, use
POST /api/v1/plugins/{id}/versions/{version}/yank instead, which rebuilds at once.
Recorded in the audit log with actor "cli". Undo with ` + "`registry unyank`" + `.
Exit status: 0 when done, 1 when the release is not stored or the data directory is in
use, 2 on usage or I/O errors.`,
	Example: "registry yank --data /var/lib/registry --reason \"crashes on start\" acme-hello@1.2.0",
}

var unyankHelp = help{
	Summary: "restore a yanked ID@VERSION in a data directory, with the server stopped",
	Usage:   "registry unyank [--data DIR] ID@VERSION",
	About: `Restores a yanked release in the database of a data directory, without a running server;
it is back in "latest" and the index at the next rebuild. It refuses while
` + "`registry serve`" + ` holds the data directory (use the API's unyank then). Recorded in
the audit log with actor "cli".
Exit status: 0 when done, 1 when the release is not stored or the data directory is in
use, 2 on usage or I/O errors.`,
	Example: "registry unyank --data /var/lib/registry acme-hello@1.2.0",
}

var delistHelp = help{
	Summary: "yank every version of ID in a data directory, with the server stopped",
	Usage:   "registry delist [--data DIR] [--reason TEXT] ID",
	About: `Yanks every version of a package in the database of a data directory, without a running
server: the package leaves the index, the pages and the API at the next rebuild, while its
releases stay downloadable by exact URL. It is the database's equivalent of removing the id
from plugins.yaml, for when the list cannot be edited in time. It refuses while
` + "`registry serve`" + ` holds the data directory. Each version is recorded in the audit log
with actor "cli"; ` + "`registry unyank ID@VERSION`" + ` restores one.
Exit status: 0 when done, 1 when the package has no release to yank or the data directory
is in use, 2 on usage or I/O errors.`,
	Example: "registry delist --data /var/lib/registry --reason \"malware report\" acme-hello",
}

// cmdYank is `registry yank ID@VERSION`, offline.
func cmdYank(ctx context.Context, c *cli, args []string) int {
	return offlineYank(ctx, c, "yank", args, true)
}

// cmdUnyank is `registry unyank ID@VERSION`, offline.
func cmdUnyank(ctx context.Context, c *cli, args []string) int {
	return offlineYank(ctx, c, "unyank", args, false)
}

func offlineYank(ctx context.Context, c *cli, name string, args []string, yanked bool) int {
	fs := c.flags(name)
	reason := new(string)
	if yanked {
		reason = fs.String("reason", "", "why (`TEXT`), shown beside the version (recorded in the audit log)")
	}
	st, pos, code := openOffline(ctx, c, fs, args)
	if st == nil {
		return code
	}
	defer st.Close()
	id, version, ok := splitRelease(pos)
	if !ok {
		return c.usageError(name, "expected one ID@VERSION, such as acme-hello@1.2.0 or @acme/ext@0.3.0; got %q", strings.Join(pos, " "))
	}
	if !yanked {
		*reason = ""
	}
	audit := store.AuditEntry{Actor: "cli", Action: name, Target: id + "@" + version, Outcome: "ok",
		Detail: map[string]any{"reason": *reason, "offline": true}}
	err := st.SetYanked(ctx, id, version, yanked, *reason, audit)
	if errors.Is(err, store.ErrNotFound) {
		fmt.Fprintf(c.stderr, "%s: %s@%s is not stored in %s; %s\n", name, id, version, st.Dir(), storedVersions(ctx, st, id))
		return exitInvalid
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "%s: %v\n", name, err)
		return exitUsage
	}
	fmt.Fprintf(c.stdout, "%sed %s@%s; the index changes at the next start of `registry serve` (then check /readyz)\n", name, id, version)
	return exitOK
}

// cmdDelist is `registry delist ID`, offline: every version of ID yanked.
func cmdDelist(ctx context.Context, c *cli, args []string) int {
	fs := c.flags("delist")
	reason := fs.String("reason", "delisted", "why (`TEXT`), shown beside each version (recorded in the audit log)")
	st, pos, code := openOffline(ctx, c, fs, args)
	if st == nil {
		return code
	}
	defer st.Close()
	if len(pos) != 1 || pos[0] == "" {
		return c.usageError("delist", "expected one package ID, such as acme-hello or @acme/ext; got %q", strings.Join(pos, " "))
	}
	id := pos[0]
	// One transaction: every live version is yanked, or none is.
	done, err := st.YankAll(ctx, id, *reason, func(v string) store.AuditEntry {
		return store.AuditEntry{Actor: "cli", Action: "yank", Target: id + "@" + v, Outcome: "ok",
			Detail: map[string]any{"reason": *reason, "offline": true, "delist": true}}
	})
	if err != nil {
		fmt.Fprintf(c.stderr, "delist: %v (nothing was yanked)\n", err)
		return exitUsage
	}
	if len(done) == 0 {
		fmt.Fprintf(c.stderr, "delist: %s has no release left to yank in %s (%s)\n", id, st.Dir(), storedVersions(ctx, st, id))
		return exitInvalid
	}
	fmt.Fprintf(c.stdout, "yanked %s@{%s}; the package leaves the index at the next start of `registry serve`; remove it from plugins.yaml to delist it for good\n",
		id, strings.Join(done, ", "))
	return exitOK
}

// offline is a data directory taken from `registry serve`: its lock and its store.
type offline struct {
	*store.Store
	lock dirLocks
}

func (o *offline) Close() {
	_ = o.Store.Close()
	_ = o.lock.Close()
}

// openOffline parses args (printing the help and exiting 0 on --help), checks that the
// registry database is there, takes the data directory of --data and the directory of a
// SQLite file --database names elsewhere (lockStore), and opens its store. The lock is
// what makes these commands offline: a running server would not rebuild its index after
// a change made behind its back, so they refuse while it holds either directory.
func openOffline(ctx context.Context, c *cli, fs *flag.FlagSet, args []string) (*offline, []string, int) {
	data := dataFlag(c, fs)
	b := backendFlags(c, fs)
	pos, err := parse(fs, args)
	if err != nil {
		return nil, nil, parseExit(err)
	}
	if msg := b.missingDatabase(*data); msg != "" {
		fmt.Fprintf(c.stderr, "%s: %s\n", fs.Name(), msg)
		return nil, nil, exitUsage
	}
	lock, err := lockStore(*data, *b, "changing its database offline, or make the change through its API")
	if err != nil {
		fmt.Fprintf(c.stderr, "%s: %v\n", fs.Name(), err)
		return nil, nil, exitInvalid
	}
	st, err := b.openMetadata(ctx, *data)
	if err != nil {
		_ = lock.Close()
		fmt.Fprintf(c.stderr, "%s: %v\n", fs.Name(), err)
		return nil, nil, exitUsage
	}
	return &offline{Store: st, lock: lock}, pos, exitOK
}

// splitRelease splits ID@VERSION at the last "@", so that scoped extension names
// (@scope/name@1.0.0) keep their leading one.
func splitRelease(pos []string) (id, version string, ok bool) {
	if len(pos) != 1 {
		return "", "", false
	}
	i := strings.LastIndex(pos[0], "@")
	if i <= 0 || i == len(pos[0])-1 {
		return "", "", false
	}
	return pos[0][:i], pos[0][i+1:], true
}

// storedVersions says which versions of id exist, for an error message.
func storedVersions(ctx context.Context, st *offline, id string) string {
	rels, err := st.Releases(ctx, id)
	if err != nil || len(rels) == 0 {
		return fmt.Sprintf("no version of %q is stored", id)
	}
	vs := make([]string, 0, len(rels))
	for _, r := range rels {
		v := r.Version
		if r.Yanked {
			v += " (yanked)"
		}
		vs = append(vs, v)
	}
	return fmt.Sprintf("stored versions of %s: %s", id, strings.Join(vs, ", "))
}

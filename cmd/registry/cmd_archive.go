package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
)

const archiveAbout = `With --registry URL (or REGISTRY_URL) it asks a running registry, with the token in
REGISTRY_TOKEN: a publisher token whose publisher is among the entry's owners in
plugins.yaml, or the admin token; the index changes at once. Without it, it changes the
database of --data DIR (REGISTRY_DATA) with the server stopped, as an admin (actor "cli"),
and the index changes at the next start of ` + "`registry serve`" + `; it refuses while the server holds the
directory. --data, --database or --blobs given beside --registry or REGISTRY_URL is refused
(exit 2): unset REGISTRY_URL to change the data directory, or drop --data to ask the
registry. Either way it is recorded in the audit log and the change feed. See docs/archived.md.
Exit status: 0 when done (also when it already was in that state), 1 when refused (not an
owner, no such package, data directory in use), 2 on usage, network or I/O errors.`

var archiveHelp = help{
	Summary: "archive a package: no more releases expected (it stays installable)",
	Usage:   "registry archive --registry URL ID\nregistry archive [--data DIR] ID",
	About: `Marks package ID archived: it stays in index.json (with "archived": true), installable
and on its page (with a notice), sorts after every active package in listings, search and
the selection of a partial index, and refuses new releases (rule publish.archived) until
` + "`registry unarchive`" + `.
` + archiveAbout,
	Example: "REGISTRY_TOKEN=pyr_... registry archive --registry https://plugins.example.com acme-hello\nregistry archive --data /var/lib/registry acme-hello",
}

var unarchiveHelp = help{
	Summary: "unarchive a package: it takes releases again",
	Usage:   "registry unarchive --registry URL ID\nregistry unarchive [--data DIR] ID",
	About: `Marks archived package ID active again: it sorts among the active packages and takes new
releases.
` + archiveAbout,
	Example: "REGISTRY_TOKEN=pyr_... registry unarchive --registry https://plugins.example.com acme-hello\nregistry unarchive --data /var/lib/registry acme-hello",
}

// cmdArchive is `registry archive ID`.
func cmdArchive(ctx context.Context, c *cli, args []string) int {
	return archiveCmd(ctx, c, "archive", args, true)
}

// cmdUnarchive is `registry unarchive ID`.
func cmdUnarchive(ctx context.Context, c *cli, args []string) int {
	return archiveCmd(ctx, c, "unarchive", args, false)
}

func archiveCmd(ctx context.Context, c *cli, name string, args []string, archived bool) int {
	fs := c.flags(name)
	registry := fs.String("registry", envDefault(c, "REGISTRY_URL", ""), "a running registry's base `URL` (REGISTRY_URL); empty: change --data offline")
	offline := offlineFlags(c, fs)
	pos, err := parse(fs, args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) != 1 || pos[0] == "" {
		return c.usageError(name, "expected one package ID, such as acme-hello or @acme/ext; got %q", strings.Join(pos, " "))
	}
	if code := remoteAndLocal(c, fs, *registry); code != exitOK {
		return code
	}
	if *registry != "" {
		return archiveOnline(ctx, c, name, strings.TrimRight(*registry, "/"), pos[0])
	}
	return archiveOffline(ctx, c, name, offline(), pos[0], archived)
}

func archiveOnline(ctx context.Context, c *cli, name, registry, id string) int {
	var ans ingest.ArchiveResult // the registry answers with it
	call := registryCall{cmd: name, op: name + " " + id, registry: registry, method: http.MethodPost,
		path:      "/api/v1/plugins/" + url.PathEscape(id) + "/" + name,
		tokenHint: "a publisher token of one of " + id + "'s owners (registry token create) or the admin token"}
	if code := askRegistry(ctx, c, call, &ans); code != exitOK {
		return code
	}
	printArchived(c, name, ans.ID, ans.Changed, "the index shows it now")
	return exitOK
}

func archiveOffline(ctx context.Context, c *cli, name string, offline []string, id string, archived bool) int {
	fs := c.flags(name)
	st, _, code := openOffline(ctx, c, fs, offline)
	if st == nil {
		return code
	}
	defer st.Close()
	audit := store.AuditEntry{Actor: "cli", Action: name, Target: id, Outcome: "ok", Detail: map[string]any{"offline": true}}
	changed, err := st.SetArchived(ctx, id, archived, audit)
	if errors.Is(err, store.ErrNotFound) {
		fmt.Fprintf(c.stderr, "%s: %s has no release stored in %s\n", name, id, st.Dir())
		return exitInvalid
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "%s: %v\n", name, err)
		return exitUsage
	}
	printArchived(c, name, id, changed, "the index changes at the next start of `registry serve`")
	return exitOK
}

func printArchived(c *cli, name, id string, changed bool, when string) {
	if !changed {
		fmt.Fprintf(c.stdout, "%s was %sd already; nothing changed\n", id, name)
		return
	}
	fmt.Fprintf(c.stdout, "%sd %s; %s\n", name, id, when)
}

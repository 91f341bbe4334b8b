package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
)

var quarantineHelp = help{
	Summary: "quarantine a package or one release with a public reason, release it, or list them",
	Usage: "registry quarantine set [--registry URL | --data DIR] --reason TEXT ID[@VERSION]\n" +
		"registry quarantine release [--registry URL | --data DIR] ID[@VERSION]\n" +
		"registry quarantine list [--json] [--registry URL | --data DIR]",
	About: "`set` takes a whole package (ID) or one release (ID@VERSION) out of reach without\n" +
		"deleting anything: it leaves index.json, its shards, the host-aware documents, search and\n" +
		"the listings; its downloads answer 410 Gone with the reason (rule quarantine.download);\n" +
		"no token may publish it (publish.quarantined); its page stays and shows the reason; its\n" +
		"package document (/api/v1/index/ID.json) lists it under state.quarantined. --reason is\n" +
		"required and public: one line, at most 500 characters (rule quarantine.reason); a `set`\n" +
		"of a target already quarantined replaces the reason. `release` ends the quarantine and\n" +
		"restores everything exactly; a release of what is not quarantined changes nothing and\n" +
		"says so. Both are recorded in the audit log (actor \"cli\"), the change feed and the\n" +
		"transparency log. With --registry URL (or REGISTRY_URL) they ask a running registry\n" +
		"with the admin token in REGISTRY_TOKEN (POST /api/v1/admin/quarantine/{id}[/versions/\n" +
		"{version}][/release], GET /api/v1/admin/quarantine) and take effect at once. Without it,\n" +
		"`set` and `release` change the database of --data DIR with the server stopped (actor\n" +
		"\"cli\"; they show at the next start of `registry serve`) and refuse while it holds the\n" +
		"directory; `list` reads it beside the server. --data, --database or --blobs given\n" +
		"beside --registry or REGISTRY_URL is refused (exit 2): unset REGISTRY_URL to use the\n" +
		"data directory, or drop --data to ask the registry.\n" +
		"See docs/quarantine.md.\n" +
		"Exit status: 0 when done, 1 when the target is not stored, the reason or the token is\n" +
		"refused or the data directory is in use, 2 on usage, network or I/O errors.",
	Example: "REGISTRY_TOKEN=$ADMIN_TOKEN registry quarantine set --registry https://plugins.example.com --reason \"malware report, confirmed\" acme-hello\n" +
		"registry quarantine set --data /var/lib/registry --reason \"a leaked token published a credential stealer\" acme-hello@1.2.0\n" +
		"registry quarantine release --data /var/lib/registry acme-hello@1.2.0\n" +
		"registry quarantine list --data /var/lib/registry",
}

// quarantineActions are the subcommands of quarantine, in the order its help lists them.
var quarantineActions = []string{"set", "release", "list"}

// quarantineFlags is the FlagSet of one subcommand without --data (its opener adds it).
func quarantineFlags(c *cli, action string) (fs *flag.FlagSet, reason *string, asJSON *bool) {
	fs = c.flags("quarantine " + action)
	fs.String("registry", envDefault(c, "REGISTRY_URL", ""), "a running registry's base `URL` (REGISTRY_URL), asked with the admin token in REGISTRY_TOKEN; empty: the data directory")
	switch action {
	case "set":
		reason = fs.String("reason", "", "why, publicly (`TEXT`, one line, at most 500 characters), shown on the page and in the 410")
	case "list":
		asJSON = fs.Bool("json", false, "print JSON")
	}
	return fs, reason, asJSON
}

// offlineFlags declares --data, --database and --blobs on fs, for a command that either asks
// a running registry or changes its store offline, and returns what hands the parsed values
// on to openOffline or openStore (which parse a flag set of their own).
func offlineFlags(c *cli, fs *flag.FlagSet) func() []string {
	data := dataFlag(c, fs)
	b := backendFlags(c, fs)
	return func() []string { return []string{"--data", *data, "--database", b.database, "--blobs", b.blobs} }
}

// remoteAndLocal refuses, after fs is parsed, a command that names both a running registry
// (registry, from --registry or REGISTRY_URL) and a local store (--data, --database or
// --blobs set on the command line): the remote one would win, and a REGISTRY_URL left in
// the shell would turn a change aimed at an offline copy into one on that registry. An
// explicit --registry beside REGISTRY_DATA (or REGISTRY_DATABASE) is not a conflict: only
// flags given on the command line count. It returns exitOK when there is none.
func remoteAndLocal(c *cli, fs *flag.FlagSet, registry string) int {
	if registry == "" {
		return exitOK
	}
	var local []string
	explicit := false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "data", "database", "blobs":
			local = append(local, "--"+f.Name+" "+redact(f.Value.String()))
		case "registry":
			explicit = true
		}
	})
	if len(local) == 0 {
		return exitOK
	}
	remote, fix := "--registry "+registry, "drop --registry"
	if !explicit {
		remote, fix = "REGISTRY_URL="+registry, "unset REGISTRY_URL"
	}
	return c.usageError(fs.Name(), "%s names a running registry and %s a local store: which one is meant is ambiguous; %s to use the local store, or drop %s to ask the registry",
		remote, strings.Join(local, " and "), fix, strings.Join(flagNames(local), " and "))
}

// flagNames are the flag names ("--data") of "--data DIR" pairs.
func flagNames(pairs []string) []string {
	names := make([]string, len(pairs))
	for i, p := range pairs {
		names[i], _, _ = strings.Cut(p, " ")
	}
	return names
}

func printQuarantineHelp(c *cli) int {
	sets := make([]*flag.FlagSet, 0, len(quarantineActions))
	for _, a := range quarantineActions {
		fs, _, _ := quarantineFlags(c, a)
		offlineFlags(c, fs)
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

// splitTarget reads ID or ID@VERSION (splitRelease's last-"@" rule, so a scoped extension
// name @scope/name keeps its leading one); version is "" for a whole package.
func splitTarget(pos []string) (id, version string, ok bool) {
	if len(pos) == 1 && pos[0] != "" && strings.LastIndex(pos[0], "@") <= 0 {
		return pos[0], "", true
	}
	return splitRelease(pos)
}

// quarantineArgs parses a subcommand's flags (the registry's, or --data's) and its
// ID[@VERSION] (list: none); code is non-zero when the command ends here.
func quarantineArgs(c *cli, fs *flag.FlagSet, args []string, wantTarget bool) (registry string, offline []string, id, version string, code int) {
	offlineArgs := offlineFlags(c, fs)
	pos, err := parse(fs, args)
	if err != nil {
		return "", nil, "", "", parseExit(err)
	}
	registry = strings.TrimRight(fs.Lookup("registry").Value.String(), "/")
	if code := remoteAndLocal(c, fs, registry); code != exitOK {
		return "", nil, "", "", code
	}
	if !wantTarget {
		if len(pos) > 0 {
			return "", nil, "", "", c.usageError("quarantine", "list takes no argument, found %q", strings.Join(pos, " "))
		}
		return registry, offlineArgs(), "", "", exitOK
	}
	id, version, ok := splitTarget(pos)
	if !ok {
		return "", nil, "", "", c.usageError("quarantine", "expected one ID or ID@VERSION, such as acme-hello or acme-hello@1.2.0; got %q", strings.Join(pos, " "))
	}
	return registry, offlineArgs(), id, version, exitOK
}

func quarantineSet(ctx context.Context, c *cli, args []string) int {
	fs, reason, _ := quarantineFlags(c, "set")
	registry, offline, id, version, code := quarantineArgs(c, fs, args, true)
	if code != exitOK {
		return code
	}
	q := store.Quarantine{PackageID: id, Version: version, Reason: *reason, SetBy: "cli"}
	if registry != "" {
		var got store.Quarantine
		if code := quarantineOnline(ctx, c, "quarantine set", registry, http.MethodPost, quarantinePath(id, version), map[string]string{"reason": *reason}, &got); code != exitOK {
			return code
		}
		fmt.Fprintf(c.stdout, "quarantined %s: it is out of the index and its downloads answer 410 now\n", got.Target())
		return exitOK
	}
	if err := ingest.CheckQuarantineReason(*reason); err != nil {
		return compatFailed(c, "quarantine set", err)
	}
	st, _, code := openOffline(ctx, c, c.flags("quarantine set"), offline)
	if st == nil {
		return code
	}
	defer st.Close()
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
	registry, offline, id, version, code := quarantineArgs(c, fs, args, true)
	if code != exitOK {
		return code
	}
	target := store.TargetName(id, version)
	var had bool
	when := "it is back in the index at the next start of `registry serve`"
	if registry != "" {
		var ans struct {
			Released bool `json:"released"`
		}
		if code := quarantineOnline(ctx, c, "quarantine release", registry, http.MethodPost, quarantinePath(id, version)+"/release", nil, &ans); code != exitOK {
			return code
		}
		had, when = ans.Released, "it is back in the index now"
	} else {
		st, _, code := openOffline(ctx, c, c.flags("quarantine release"), offline)
		if st == nil {
			return code
		}
		defer st.Close()
		audit := store.AuditEntry{Actor: "cli", Action: "unquarantine", Target: target, Outcome: "ok", Detail: map[string]any{"offline": true}}
		var err error
		if had, err = st.ReleaseQuarantine(ctx, id, version, audit); err != nil {
			fmt.Fprintf(c.stderr, "quarantine release: %v\n", err)
			return exitUsage
		}
	}
	if !had {
		fmt.Fprintf(c.stdout, "%s is not quarantined; nothing changed (`registry quarantine list` shows what is)\n", target)
		return exitOK
	}
	fmt.Fprintf(c.stdout, "released the quarantine of %s: %s\n", target, when)
	return exitOK
}

func quarantineList(ctx context.Context, c *cli, args []string) int {
	fs, _, asJSON := quarantineFlags(c, "list")
	registry, offline, _, _, code := quarantineArgs(c, fs, args, false)
	if code != exitOK {
		return code
	}
	var qs []store.Quarantine
	if registry != "" {
		var ans struct {
			Quarantines []store.Quarantine `json:"quarantines"`
		}
		if code := quarantineOnline(ctx, c, "quarantine list", registry, http.MethodGet, "/api/v1/admin/quarantine", nil, &ans); code != exitOK {
			return code
		}
		qs = ans.Quarantines
	} else {
		st, _, code := openStore(ctx, c, c.flags("quarantine list"), offline)
		if st == nil {
			return code
		}
		defer st.Close()
		var err error
		if qs, err = st.Quarantines(ctx); err != nil {
			fmt.Fprintf(c.stderr, "quarantine list: %v\n", err)
			return exitUsage
		}
	}
	return printQuarantines(c, qs, *asJSON)
}

func printQuarantines(c *cli, qs []store.Quarantine, asJSON bool) int {
	if asJSON {
		return writeJSON(c.stdout, qs)
	}
	if len(qs) == 0 {
		fmt.Fprintln(c.stdout, "nothing is quarantined")
		return exitOK
	}
	tw := newTable(c.stdout, "TARGET\tSINCE\tBY\tREASON")
	for _, q := range qs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", q.Target(), q.SetAt.Format(time.RFC3339), q.SetBy, q.Reason)
	}
	_ = tw.Flush()
	return exitOK
}

// quarantinePath is the admin API path of id's (version "") or id@version's quarantine.
func quarantinePath(id, version string) string {
	p := "/api/v1/admin/quarantine/" + url.PathEscape(id)
	if version != "" {
		p += "/versions/" + url.PathEscape(version)
	}
	return p
}

// registryCall is one request of a --registry command to a running registry's API, sent
// with the token in REGISTRY_TOKEN.
type registryCall struct {
	cmd       string // the command, in usage errors
	op        string // the request, in its errors ("quarantine set", "archive acme-hello")
	tokenHint string // which token REGISTRY_TOKEN must hold, when it is empty
	registry  string // base URL, without a trailing "/"
	method    string
	path      string
	body      any // JSON-encoded when not nil
}

// askRegistry sends call and decodes the registry's 200 answer into v: 1 when refused (its
// problems printed with their rules), 2 on usage or network errors.
func askRegistry(ctx context.Context, c *cli, call registryCall, v any) int {
	if u, err := url.Parse(call.registry); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c.usageError(call.cmd, "--registry %q: expected the registry's absolute http(s) base URL, e.g. https://plugins.example.com (or set REGISTRY_URL)", call.registry)
	}
	token := strings.TrimSpace(c.getenv("REGISTRY_TOKEN"))
	if token == "" {
		return c.usageError(call.cmd, "REGISTRY_TOKEN is empty: set it to %s", call.tokenHint)
	}
	var rd io.Reader
	if call.body != nil {
		b, err := json.Marshal(call.body)
		if err != nil {
			return c.usageError(call.cmd, "%v", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, call.method, call.registry+call.path, rd)
	if err != nil {
		return c.usageError(call.cmd, "%v", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if call.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	err = getJSON(&http.Client{Timeout: time.Minute}, req, call.op, v)
	var rf *refusedError
	switch {
	case errors.As(err, &rf):
		fmt.Fprintf(c.stderr, "registry %v\n", err)
		printProblems(c.stderr, rf.problems)
		return exitInvalid
	case err != nil:
		fmt.Fprintf(c.stderr, "registry %v\n", err)
		return exitUsage
	}
	return exitOK
}

// quarantineOnline asks registry's admin API with the admin token in REGISTRY_TOKEN.
func quarantineOnline(ctx context.Context, c *cli, op, registry, method, path string, body, v any) int {
	return askRegistry(ctx, c, registryCall{cmd: "quarantine", op: op, tokenHint: "the registry's admin token (only admins quarantine)",
		registry: registry, method: method, path: path, body: body}, v)
}

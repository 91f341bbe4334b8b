package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strings"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/pull"
	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
)

var syncHelp = help{
	Summary: "pull the latest GitHub release of every listed repository (--once: one round)",
	Usage:   "registry sync [--once] [flags]",
	About: `Pulls the latest GitHub release of every repository plugins.yaml lists through the publish
pipeline, printing one line per repository and a total; without --once it repeats every
--sync-interval until interrupted. It takes serve's settings (the flags below and their
REGISTRY_* variables, REGISTRY_GITHUB_TOKEN for the API), so both see the same data
directory, list, public URL, trusted root and GitHub API.
Exit status: 0 when every repository synced, 1 when one failed (--once), 2 on usage errors
or when the data directory cannot be opened.`,
	Example: "registry sync --once --data /var/lib/registry\nREGISTRY_GITHUB_TOKEN=ghp_... registry sync --sync-interval 30m",
}

// syncSettings are the serve settings sync uses; the others (listening, rate limits,
// OIDC, the demo) mean nothing to it, so its help does not list them.
var syncSettings = []string{"data", "database", "blobs", "plugins", "public-url", "site-name", "github-api", "sync-interval",
	"sync-download-hosts", "sigstore-trusted-root", "sigstore-tlog-threshold", "sigstore-timestamp-threshold",
	"sigstore-sct-threshold"}

// syncFlags declares sync's flags: syncSettings as serve declares them (same variables, same
// parsing), and --once.
func syncFlags(c *cli, cfg *Config) (*flag.FlagSet, *bool) {
	all := flag.NewFlagSet("serve", flag.ContinueOnError)
	bindServeFlags(all, c, cfg)
	fs := c.flags("sync")
	for _, name := range syncSettings {
		f := all.Lookup(name)
		fs.Var(f.Value, f.Name, f.Usage)
		fs.Lookup(name).DefValue = f.DefValue
	}
	once := fs.Bool("once", false, "run one round and exit (exit 1 when a repository failed); default: a round every --sync-interval until interrupted")
	return fs, once
}

// cmdSync is `registry sync [--once]`: pull the latest GitHub release of every repository
// plugins.yaml lists through the publish pipeline, printing one line per repository and a
// total; without --once it repeats every --sync-interval until interrupted.
func cmdSync(ctx context.Context, c *cli, args []string) int {
	var cfg Config
	fs, once := syncFlags(c, &cfg)
	pos, err := parse(fs, args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) > 0 {
		return c.usageError("sync", "expected no argument, found %q", strings.Join(pos, " "))
	}
	if err := cfg.validate(); err != nil {
		fmt.Fprintf(c.stderr, "registry sync: configuration:\n%v\n", err)
		return exitUsage
	}
	if !*once && cfg.SyncInterval <= 0 {
		return c.usageError("sync", "--sync-interval %s: a loop needs a positive interval (e.g. 15m), or pass --once", cfg.SyncInterval)
	}
	code, err := runSync(ctx, c, cfg, *once)
	if err != nil {
		fmt.Fprintf(c.stderr, "registry sync: %v\n", err)
		return exitUsage
	}
	return code
}

func runSync(ctx context.Context, c *cli, cfg Config, once bool) (int, error) {
	// Progress goes to stdout; the log only carries what went wrong outside it.
	log := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	svc, st, closeStore, err := openService(ctx, cfg, log)
	if err != nil {
		return exitUsage, err
	}
	defer closeStore()
	s, err := newSyncer(cfg, svc, st, log, func(r pull.Result) { fmt.Fprintln(c.stdout, r) })
	if err != nil {
		return exitUsage, err
	}
	total := func(sum pull.Summary) { fmt.Fprintf(c.stdout, "total: %s\n", sum) }
	if !once {
		s.Run(ctx, cfg.SyncInterval, total)
		return exitOK, nil
	}
	sum := s.Round(ctx)
	total(sum)
	if sum.Failed+sum.Errors > 0 {
		return exitInvalid, nil
	}
	return exitOK, ctx.Err()
}

// openService opens the store and builds the ingest service as serve does (without the
// server's metrics), with the index built; closeStore stops the service's background work,
// then closes the store.
func openService(ctx context.Context, cfg Config, log *slog.Logger) (svc *ingest.Service, st *store.Store, closeStore func(), err error) {
	list, err := loadList(cfg.PluginsPath)
	if err != nil {
		return nil, nil, nil, err
	}
	icfg, err := ingestConfig(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	st, icfg.Blobs, err = cfg.backends().open(ctx, cfg.DataDir)
	if err != nil {
		return nil, nil, nil, err
	}
	// Only serve writes the last good documents: sync builds documents for its own
	// publishes and serves none, at a --public-url that may not be serve's (its default,
	// or a typo), and may run beside serve. The serve after it rebuilds from the store, so
	// the last good documents it falls back to are at worst a valid index from before the
	// sync.
	icfg.NoLastGood = true
	svc = ingest.New(st, list, icfg, log)
	if err := svc.Rebuild(ctx); err != nil {
		svc.Close()
		_ = st.Close()
		return nil, nil, nil, err
	}
	return svc, st, func() { svc.Close(); _ = st.Close() }, nil
}

// newSyncer is the pull sync of cfg: its GitHub API base and token, a User-Agent naming
// this registry.
func newSyncer(cfg Config, svc *ingest.Service, st pull.Store, log *slog.Logger, progress func(pull.Result)) (*pull.Syncer, error) {
	s, err := pull.New(svc, st, pull.Config{Progress: progress, Client: pull.ClientConfig{API: cfg.GitHubAPI, Token: cfg.GitHubToken, DownloadHosts: cfg.SyncDownloadHosts,
		UserAgent: "pluginyard-registry-sync (+" + cfg.PublicURL + ")"}}, log)
	if err != nil {
		return nil, fmt.Errorf("--github-api: %w", err)
	}
	return s, nil
}

// backgroundSync is serve's poller: its status for GET /api/v1/admin/sync and the loop to
// run until ctx ends. It is off (nil status, a loop that returns at once) with --demo or a
// zero --sync-interval.
func backgroundSync(cfg Config, svc *ingest.Service, st pull.Store, log *slog.Logger) (server.SyncStatus, func(ctx context.Context), error) {
	if cfg.Demo || cfg.SyncInterval <= 0 {
		return nil, func(context.Context) {}, nil
	}
	s, err := newSyncer(cfg, svc, st, log, nil)
	if err != nil {
		return nil, nil, err
	}
	// The syncer logs one summary line per round itself; the per-repository results are
	// at debug level and in GET /api/v1/admin/sync.
	run := func(ctx context.Context) { s.Run(ctx, cfg.SyncInterval, nil) }
	return s, run, nil
}

package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/pull"
	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
)

// cmdSync is `registry sync [--once]`: pull the latest GitHub release of every repository
// plugins.yaml lists through the publish pipeline, printing one line per repository and a
// total; without --once it repeats every --sync-interval until interrupted. It takes
// serve's configuration (flags and REGISTRY_* variables), so both see the same data
// directory, list, public URL, trusted root and GitHub API.
func cmdSync(ctx context.Context, c *cli, args []string) int {
	fs := c.flags("sync")
	var cfg Config
	bindServeFlags(fs, c, &cfg)
	once := fs.Bool("once", false, "run one round and exit (exit 1 when a repository failed); default: a round every --sync-interval until interrupted")
	if _, err := parse(fs, args); err != nil {
		return exitUsage
	}
	if err := cfg.validate(); err != nil {
		fmt.Fprintf(c.stderr, "registry sync: configuration:\n%v\n", err)
		return exitUsage
	}
	if !*once && cfg.SyncInterval <= 0 {
		fmt.Fprintf(c.stderr, "registry sync: --sync-interval %s: a loop needs a positive interval (e.g. 15m), or pass --once\n", cfg.SyncInterval)
		return exitUsage
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
	svc, closeStore, err := openService(ctx, cfg, log)
	if err != nil {
		return exitUsage, err
	}
	defer closeStore()
	s, err := newSyncer(cfg, svc, log, func(r pull.Result) { fmt.Fprintln(c.stdout, r) })
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
// server's metrics), with the index built; closeStore closes the store.
func openService(ctx context.Context, cfg Config, log *slog.Logger) (svc *ingest.Service, closeStore func(), err error) {
	list, err := loadList(cfg.PluginsPath)
	if err != nil {
		return nil, nil, err
	}
	icfg, err := ingestConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	st, err := store.Open(ctx, cfg.DataDir)
	if err != nil {
		return nil, nil, err
	}
	svc = ingest.New(st, list, icfg, log)
	if err := svc.Rebuild(ctx); err != nil {
		_ = st.Close()
		return nil, nil, err
	}
	return svc, func() { _ = st.Close() }, nil
}

// newSyncer is the pull sync of cfg: its GitHub API base and token, a User-Agent naming
// this registry.
func newSyncer(cfg Config, svc *ingest.Service, log *slog.Logger, progress func(pull.Result)) (*pull.Syncer, error) {
	s, err := pull.New(svc, pull.Config{Progress: progress, Client: pull.ClientConfig{API: cfg.GitHubAPI, Token: cfg.GitHubToken, DownloadHosts: cfg.SyncDownloadHosts,
		UserAgent: "pluginyard-registry-sync (+" + cfg.PublicURL + ")"}}, log)
	if err != nil {
		return nil, fmt.Errorf("--github-api: %w", err)
	}
	return s, nil
}

// backgroundSync is serve's poller: its status for GET /api/v1/admin/sync and the loop to
// run until ctx ends. It is off (nil status, a loop that returns at once) with --demo or a
// zero --sync-interval.
func backgroundSync(cfg Config, svc *ingest.Service, log *slog.Logger) (server.SyncStatus, func(ctx context.Context), error) {
	if cfg.Demo || cfg.SyncInterval <= 0 {
		return nil, func(context.Context) {}, nil
	}
	s, err := newSyncer(cfg, svc, log, nil)
	if err != nil {
		return nil, nil, err
	}
	run := func(ctx context.Context) {
		s.Run(ctx, cfg.SyncInterval, func(sum pull.Summary) { log.Info("sync round", "total", sum.String()) })
	}
	return s, run, nil
}

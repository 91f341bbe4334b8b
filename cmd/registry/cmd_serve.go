package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
	"github.com/pluginyard/registry/verify/signature"
)

var serveHelp = help{
	Summary: "run the registry (HTTP server, index, marketplace)",
	Usage:   "registry serve [flags]",
	About: `Serves the index (/index.json), the packages, the JSON API and the marketplace pages from
one process, and polls GitHub for the releases of the listed repositories (pull sync, every
--sync-interval). Every flag can be set by the environment variable named beside it; a flag
wins over its variable. REGISTRY_ADMIN_TOKEN (environment only) sets the admin token; without
it one is generated at first start and printed once. SIGHUP reloads plugins.yaml.
Exit status: 0 after SIGINT/SIGTERM, 1 when the registry cannot start or stops on an error,
2 when a setting is malformed (every malformed setting is listed).`,
	Example: "registry serve --demo\nREGISTRY_PUBLIC_URL=https://plugins.example.com registry serve --addr :8080 --data /var/lib/registry",
}

// cmdServe is `registry serve`: validate the configuration, open the store, build the
// index, and serve until SIGINT/SIGTERM; SIGHUP reloads plugins.yaml.
func cmdServe(ctx context.Context, c *cli, args []string) int {
	fs := c.flags("serve")
	var cfg Config
	bindServeFlags(fs, c, &cfg)
	pos, err := parse(fs, args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) > 0 {
		return c.usageError("serve", "expected no argument, found %q (every setting is a flag, such as --data DIR)", strings.Join(pos, " "))
	}
	if err := cfg.validate(); err != nil {
		fmt.Fprintf(c.stderr, "registry serve: configuration:\n%v\n", err)
		return exitUsage
	}
	if err := serve(ctx, c, cfg); err != nil {
		fmt.Fprintf(c.stderr, "registry serve: %v\n", err)
		return exitInvalid
	}
	return exitOK
}

// newLogger is the process's logger, writing to w in format (json, else text).
func newLogger(w io.Writer, format string) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// serve runs the registry with a validated configuration.
func serve(ctx context.Context, c *cli, cfg Config) error {
	logOut := server.NewLogOutput(c.stderr) // request lines leave in batches (server.LogOutput)
	log := newLogger(logOut, cfg.LogFormat)
	cache := listCache(cfg, log)
	// plugins.yaml is checked on one CPU (a second at 50,000 entries when it or the binary
	// changed) while the store opens, orphans are swept and the first build's rows are
	// read (ingest.StartPreload); a refused list is still the error reported first.
	restoreGC := startupGC() // through the list's check, the rows' read and the first build
	defer restoreGC()        // an early return (restoreGC acts once)
	checking := startListLoad(cache, cfg.PluginsPath)
	lock, err := lockStore(cfg.DataDir, cfg.backends(), "starting another registry on it")
	if err != nil {
		return checking.fail(err)
	}
	defer lock.Close()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return checking.fail(listenError(cfg.Addr, err))
	}
	defer ln.Close()
	cfg.listening(ln.Addr())
	var (
		list *index.List
		dm   *demo // nil without --demo
	)
	if cfg.Demo {
		if _, err := checking.wait(); err != nil {
			return err
		}
		if dm, list, err = startDemo(c, cfg); err != nil {
			return err
		}
	}
	if err := cfg.backends().blobsWithoutDatabase(cfg.DataDir); err != nil {
		return checking.fail(err)
	}
	st, blobs, err := cfg.backends().open(ctx, cfg.DataDir)
	if err != nil {
		return checking.fail(err)
	}
	defer st.Close()
	if n, err := cfg.backends().sweep(ctx, st, blobs, cfg.DataDir); err != nil {
		return checking.fail(err)
	} else if n > 0 {
		log.Info("removed orphan blobs left by an interrupted publish", "count", n)
	}
	var preload *ingest.Preload
	if !cfg.Demo { // the demo publishes before the first build: its rows are read after
		preload = ingest.StartPreload(ctx, st)
		defer preload.Wait() // before the store closes
		if list, err = checking.wait(); err != nil {
			return err
		}
	}
	if n := len(cfg.AdminToken); n > 0 && n < minAdminToken {
		log.Warn(fmt.Sprintf("REGISTRY_ADMIN_TOKEN is %d characters: anyone who guesses it administers the registry; set at least %d random ones (openssl rand -hex 32), or unset it to use a generated admin token", n, minAdminToken))
	}
	if secret, err := ingest.EnsureAdminToken(ctx, st, cfg.AdminToken != ""); err != nil {
		return err
	} else if secret != "" {
		fmt.Fprintf(c.stdout, "\nAdmin token (shown once; it is stored hashed): %s\nSet REGISTRY_ADMIN_TOKEN to use your own instead.\n\n", secret)
	}
	icfg, err := ingestConfig(cfg)
	if err != nil {
		return err
	}
	icfg.Blobs = blobs
	if cfg.BlobsRedirect {
		icfg.BlobRedirect = ingest.DefaultBlobRedirect
	}
	tlog, err := openTransparencyLog(ctx, cfg, st, log)
	if err != nil {
		return err
	}
	icfg.LogCheckpoint = tlog.Checkpoint
	icfg.IndexSigner, icfg.LogTile = tlog.Key().Signer, tlog.Tile // signed index.json, exported tiles
	metrics := server.NewMetrics()
	icfg.Observer = metrics
	icfg.Previews.Hosts = cfg.PreviewHosts // only serve copies previews; sync and export never contact image hosts
	if len(icfg.Previews.Hosts) == 0 {
		icfg.Previews.Hosts = ingest.DefaultPreviewHosts
	}
	icfg.Preload = preload
	svc := ingest.New(st, list, icfg, log)
	defer svc.Close() // stops rebuild retries and preview copies before the store closes
	// On PostgreSQL this is one of several replicas: it follows the change feed and shares
	// each serial's index documents (ingest/replica.go, docs/architecture.md).
	if st.Dialect() == store.Postgres {
		if err := svc.EnableReplica(ingest.ReplicaOptions{}); err != nil {
			return err
		}
	}
	// What uploads cut short by a crash left in the spool goes before anything publishes.
	if err := svc.CleanSpool(); err != nil {
		return err
	}
	if cfg.Demo {
		if err := dm.publish(ctx, c, st, list, icfg, log); err != nil {
			return err
		}
	}
	// A lost or truncated blob is found before the first request: its release leaves the
	// index and /readyz names it. The check (a stat of every blob) runs beside the first
	// build (decoding and encoding every release): a blob found damaged rebuilds once more.
	checked := make(chan error, 1)
	go func() { checked <- svc.CheckBlobsExist(ctx) }()
	spareProc()
	err = startIndex(ctx, c, svc, log)
	if cerr := <-checked; err == nil {
		err = cerr
	}
	restoreGC()
	if err != nil {
		return err
	}
	reloader := &reloader{path: cfg.PluginsPath, svc: svc, log: log, demo: dm, cache: cache}
	var oidcExchanger server.OIDCExchanger
	if cfg.OIDCIssuer != "off" {
		oidcExchanger = ingest.NewTrustedPublishing(ctx, st, svc.List, cfg.OIDCIssuer, cfg.OIDCAudience, log)
	}
	syncStatus, runSync, err := backgroundSync(cfg, svc, st, log)
	if err != nil {
		return err
	}
	stopWebhooks, err := startWebhooks(ctx, cfg, st, log)
	if err != nil {
		return err
	}
	defer stopWebhooks() // before the store closes
	srv := server.New(server.Config{PublicURL: cfg.PublicURL, AdminSecret: cfg.AdminToken, SiteName: cfg.SiteName,
		MaxBodyBytes: cfg.MaxBodyBytes, Reload: reloader.reload, ReadyDetail: reloader.detail,
		Metrics: metrics, RateLimits: cfg.rateLimits(), OIDC: oidcExchanger, Sync: syncStatus, Log: tlog, Webhooks: cfg.webhooks, LogOutput: logOut}, svc, st, log)

	var wg sync.WaitGroup
	runCtx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); wg.Wait() }()
	wg.Add(5)
	go func() { defer wg.Done(); svc.Follow(runCtx) }() // returns at once unless a replica
	go func() { defer wg.Done(); svc.Run(runCtx, ingest.DownloadFlushInterval) }()
	go func() { defer wg.Done(); svc.RunScrub(runCtx, cfg.ScrubInterval) }()
	go func() { defer wg.Done(); reloader.onSIGHUP(runCtx) }()
	go func() { defer wg.Done(); runSync(runCtx) }()

	fmt.Fprintf(c.stdout, "registry serving %s (listening on %s, data in %s)\n  marketplace: %s/\n  Kandev source: %s/index.json\n",
		cfg.PublicURL, ln.Addr(), cfg.DataDir, cfg.PublicURL, cfg.PublicURL)
	err = srv.Serve(ctx, ln)
	log.Info("registry stopped")
	return err
}

// listenError names --addr and the likely fix: another process on the port, or an address
// this machine does not have.
func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("--addr %s: the port is in use by another process; stop it or choose another port with --addr: %w", addr, err)
	}
	return fmt.Errorf("--addr %s: cannot listen on this address (is the host one of this machine's addresses? :PORT listens on all of them): %w", addr, err)
}

// startIndex builds the index; when that fails (a stored release over the host cap, a
// stored manifest that no longer parses, anything), the registry starts all the same on the
// last good documents, or an empty index, and /readyz says why: a registry that will not
// start cannot be repaired through its API, and hosts keep a valid index. A failure of the
// storage (a full disk) blames no release and is retried in the background.
func startIndex(ctx context.Context, c *cli, svc *ingest.Service, log *slog.Logger) error {
	err := svc.Rebuild(ctx)
	if err == nil || ctx.Err() != nil {
		return err
	}
	fb, ferr := svc.ServeLastGood(ctx, err)
	if ferr != nil {
		return fmt.Errorf("%w; and no index could be served instead: %w", err, ferr)
	}
	log.Error("index rebuild at start failed; serving a fallback", "source", fb.Source, "cause", fb.Cause, "suspects", fb.Suspects, "serial", fb.Serial, "storage", fb.Storage)
	if fb.Storage {
		fmt.Fprintf(c.stderr, "registry serve: %s.\n  The cause is the storage, not a release: yank nothing. Free space on (or repair) the disk of the\n  database and the data directory; the rebuild is retried in the background, and /readyz reports\n  it until one succeeds.\n",
			fb.Reason())
		return nil
	}
	fmt.Fprintf(c.stderr, "registry serve: %s.\n  /readyz reports it until a rebuild succeeds. To repair: yank the release at fault through the API\n  (POST /api/v1/plugins/{id}/versions/{version}/yank), or stop the registry, run\n  `registry yank --data DIR ID@VERSION` (or `registry delist --data DIR ID`), and start it again.\n",
		fb.Reason())
	return nil
}

func ingestConfig(cfg Config) (ingest.Config, error) {
	ic := ingest.Config{PublicURL: cfg.PublicURL, SourceName: cfg.SiteName, Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits(),
		HostCaps: cfg.hostCaps, MaxIndexBytes: int(cfg.MaxIndexBytes), Policy: index.Policy{Order: cfg.IndexOrder}}
	if cfg.ReporterKey != "" {
		key, err := ingest.ReadReportKey(cfg.ReporterKey)
		if err != nil {
			return ic, fmt.Errorf("--reporter-key: %w", err)
		}
		ic.ReporterKey = key
	}
	if cfg.SigstoreTrustedRoot != "" {
		tm, err := signature.LoadTrustedRoot(cfg.SigstoreTrustedRoot)
		if err != nil {
			return ic, fmt.Errorf("--sigstore-trusted-root: %w", err)
		}
		ic.Sigstore = signature.NewVerifier(tm, signature.Thresholds{TransparencyLog: cfg.SigstoreTlog,
			Timestamps: cfg.SigstoreTimestamps, SCTs: cfg.SigstoreSCTs})
	}
	return ic, nil
}

// listLoad is cachedList.load of a path running on a goroutine of its own.
type listLoad struct {
	done chan struct{}
	list *index.List
	err  error
}

func startListLoad(c cachedList, path string) *listLoad {
	l := &listLoad{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		l.list, l.err = c.load(path)
	}()
	return l
}

// wait returns the checked list, or why it is refused.
func (l *listLoad) wait() (*index.List, error) {
	<-l.done
	return l.list, l.err
}

// fail is err, unless the list is refused: that is then the error, as when serve checked
// the list before anything else.
func (l *listLoad) fail(err error) error {
	if _, lerr := l.wait(); lerr != nil {
		return lerr
	}
	return err
}

// loadList reads plugins.yaml; any error-severity problem refuses it, listing them all.
func loadList(path string) (*index.List, error) {
	l, probs, err := index.LoadList(path)
	return checkedList(path, l, probs, err)
}

// cachedList is loadList through serve's list cache (DATA/cache): a start or reload of an
// unchanged plugins.yaml by the same binary decodes what the last one checked
// (index.ListCache). log reports a cache that cannot be written.
type cachedList struct {
	cache index.ListCache
	log   *slog.Logger
}

func listCache(cfg Config, log *slog.Logger) cachedList {
	return cachedList{cache: index.ListCache{Dir: filepath.Join(cfg.DataDir, "cache")}, log: log}
}

func (c cachedList) load(path string) (*index.List, error) {
	got, err := c.cache.Load(path)
	if c.log != nil {
		if got.WriteErr != nil {
			c.log.Warn("plugins.yaml cache not written; the next start parses the list again", "err", got.WriteErr)
		}
		if got.List != nil {
			c.log.Info("curated list", "path", path, "plugins", len(got.List.Plugins), "extensions", len(got.List.Extensions), "cached", got.Cached)
		}
	}
	return checkedList(path, got.List, got.Problems, err)
}

// checkedList is the list LoadList (or the cache) made of path, or the refusal of it.
func checkedList(path string, l *index.List, probs problem.List, err error) (*index.List, error) {
	if err != nil {
		return nil, fmt.Errorf("--plugins %s: cannot read the curated list: %w (create one, or point --plugins / REGISTRY_PLUGINS at it)", path, err)
	}
	if probs.HasErrors() {
		// Capped (a hostile or broken list can hold 10 000 problems): the message and the
		// 422 list the first problem.MaxListed and a count per rule of the rest, so every
		// rule id is still named; `registry lint` shows them all by line.
		errs := probs.Errors()
		listed := errs.Cap(problem.MaxListed)
		var b bytes.Buffer
		for _, p := range listed {
			fmt.Fprintf(&b, "\n  %s", p)
		}
		// A refusal, so that POST /api/v1/admin/reload answers 422 with every rule id.
		return nil, &ingest.Refusal{Kind: ingest.ErrInvalid, Problems: listed,
			Message: fmt.Sprintf("--plugins %s: %s; run `registry lint %s` for details:%s", path, plural(len(errs), "error"), path, b.String())}
	}
	return l, nil
}

// reloader re-reads plugins.yaml on SIGHUP or the admin API; a broken file keeps the
// previous list and is reported.
type reloader struct {
	path  string
	demo  *demo      // under --demo, each reload rewrites the demo's plugins.yaml from path
	cache cachedList // plugins.yaml's cache (the demo's list is not cached)
	svc   *ingest.Service
	log   *slog.Logger
	mu    sync.Mutex                    // one reload at a time
	last  atomic.Pointer[reloadFailure] // the last reload's failure, nil after a success; read by /readyz without waiting for a reload
}

type reloadFailure struct{ err error }

func (r *reloader) reload(ctx context.Context, actor string, force bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, err := r.reloadList()
	if err == nil {
		err = r.svc.SetList(ctx, l, actor)
		if force && isShrinkRefusal(err) { // force overrides the shrink guard, nothing else
			err = r.svc.ForceRebuild(ctx)
		}
	}
	if err != nil {
		r.last.Store(&reloadFailure{err})
	} else {
		r.last.Store(nil)
	}
	if err != nil {
		r.log.Error("reload of plugins.yaml refused; the previous list stays", "err", err)
		return err
	}
	r.log.Info("reloaded plugins.yaml", "plugins", len(l.Plugins), "extensions", len(l.Extensions))
	return nil
}

func (r *reloader) detail() map[string]string {
	if f := r.last.Load(); f != nil {
		return map[string]string{"plugins_yaml_reload": "last reload failed, previous list in force: " + briefError(f.err)}
	}
	return nil
}

// Bounds of the reload failure shown on the public /readyz: the full problem list is the
// reload's 422 answer (admin) and `registry lint`, not a probe's body.
const (
	readyDetailLines   = 4   // the summary line and the first three problems
	readyDetailLineLen = 300 // bytes per line
)

// briefError is err's first few lines, each clipped, and how many more there were.
func briefError(err error) string {
	lines := strings.Split(err.Error(), "\n")
	shown := lines[:min(len(lines), readyDetailLines)]
	for i, l := range shown {
		if len(l) > readyDetailLineLen {
			shown[i] = strings.ToValidUTF8(l[:readyDetailLineLen], "") + "…"
		}
	}
	out := strings.Join(shown, "\n")
	if more := len(lines) - len(shown); more > 0 {
		out += fmt.Sprintf("\n  … and %d more lines (the reload answer and `registry lint` list them)", more)
	}
	return out
}

// isShrinkRefusal reports whether err is the shrink guard's refusal of a list, the one
// refusal a forced reload may override.
func isShrinkRefusal(err error) bool {
	var rf *ingest.Refusal
	return errors.As(err, &rf) && rf.Problems.Has("index.shrink")
}

func (r *reloader) onSIGHUP(ctx context.Context) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	defer signal.Stop(ch)
	for {
		select {
		case <-ctx.Done():
			return
		case <-ch:
			_ = r.reload(ctx, "sighup", false)
		}
	}
}

// spareProc gives the Go runtime one P more than it would use while publishes run,
// unless the operator set GOMAXPROCS: publishes run on low-priority threads
// (ingest.RunLowPriority), and one of them waiting for a CPU holds its P, which requests
// being served must not need. Meanwhile the collector runs at ingest.PublishGC, unless
// the operator set GOGC (ingest.EnableSpareProc). An operator who set GOMAXPROCS tunes the
// runtime themselves: neither happens then.
func spareProc() {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	gc := ingest.PublishGC
	if os.Getenv("GOGC") != "" {
		gc = 0
	}
	ingest.EnableSpareProc(gc)
}

// startupGC lets the heap grow further between collections while the start checks the
// list and the first build decodes and encodes every release (most of what they allocate is
// garbage at once), unless the operator set GOGC; the returned func puts the collector back
// as it was, the first time it is called.
func startupGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(400)
	return sync.OnceFunc(func() {
		debug.SetGCPercent(old)
		// The build's garbage would otherwise stay resident until the scavenger returns it
		// bit by bit: collect it and give the memory back now, beside the first requests.
		go debug.FreeOSMemory()
	})
}

package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/translog"
	"github.com/pluginyard/registry/verify"
	"github.com/pluginyard/registry/verify/signature"
)

// Config is what the pipeline needs to know of the deployment.
type Config struct {
	PublicURL  string        // every absolute URL in the documents starts with it
	SourceName string        // the index's source.name
	Plugin     verify.Limits // package limits for plugins
	Canvas     verify.Limits // package limits for canvases
	// Sigstore verifies bundles; nil when no trusted root is configured, in which case a
	// release that comes with a bundle is refused (it cannot be checked).
	Sigstore *signature.Verifier
	// MaxShrink refuses an index rebuild that would drop more than this fraction of the
	// listed entries at once (0.5 by default).
	MaxShrink float64
	// MaxIndexBytes is the most bytes any index document may have (5 MiB, the Kandev host
	// cap, by default): the size policy fits index.json, its shards and the Curupira
	// document within it (Policy.Limit).
	MaxIndexBytes int
	// Policy is the size policy (docs/index-at-scale.md); New sets its Limit from
	// MaxIndexBytes and its BaseURL from PublicURL.
	Policy index.Policy
	// HostCaps is the Kandev host capability table of host-aware documents (nil:
	// DefaultHostCaps); HostCacheBytes bounds the host-aware documents kept built (0:
	// DefaultHostCacheBytes). See docs/host-aware.md.
	HostCaps       *HostCaps
	HostCacheBytes int
	// Observer, when set, is told of every publish and index rebuild (metrics).
	Observer Observer
	// WrapWriter, when set, wraps the writer of every upload spool and icon blob; tests
	// inject write failures (a full disk) through it. Nil in production.
	WrapWriter func(io.Writer) io.Writer
	// Previews is how the preview images plugins.yaml lists are copied (see PreviewConfig;
	// the zero value copies none).
	Previews PreviewConfig
	// LogCheckpoint, when set, returns the transparency log's latest signed checkpoint
	// (translog.Log.Checkpoint); signed index documents name the checkpoint they were
	// built from. Nil: no log is wired (tests).
	LogCheckpoint func(ctx context.Context) (translog.Checkpoint, error)
	// IndexSigner, when set (the log key's signer), signs every built index document
	// (GET /index.json.sig); it needs LogCheckpoint. IndexSignatureTTL is how long a
	// signature holds (DefaultIndexSignatureTTL when 0).
	IndexSigner       note.Signer
	IndexSignatureTTL time.Duration
	// LogTile, when set (translog.Log.Tile), reads a tile of the log, so that an export
	// carries the log's tiles and a mirror can be audited like the registry.
	LogTile func(ctx context.Context, t tlog.Tile) ([]byte, error)
	// Blobs holds the package, icon and preview bytes (a folder or an S3 bucket; see
	// Blobs). Nil: the folder of the *store.Store New is given (st.Blobs.Folder(),
	// DATA/blobs), today's embedded default.
	Blobs Blobs
	// BlobRedirect, when over 0, answers package downloads with a pre-signed URL of the
	// blob valid this long (serve --blobs-redirect) when Blobs is a BlobSigner (S3); a
	// folder's downloads are streamed whatever it says.
	BlobRedirect time.Duration
	// ReporterKey is the key reporters' addresses are hashed under (serve --reporter-key,
	// read by ReadReportKey); replicas sharing a database need the same one, or the one
	// open report per reporter and package would hold per replica only. Nil:
	// DATA/reporter.key, made by the first report.
	ReporterKey []byte
	// Preload, when set (StartPreload on the same store), holds the rows of the first
	// build, read while the caller checked the list.
	Preload *Preload
	// NoLastGood keeps the documents this service builds out of the last good documents
	// `registry serve` falls back to (lastgood.go): set by the commands that build them
	// for themselves (registry export at a mirror's public URL, registry sync, which serves
	// nothing), so that only serve, the one process hosts get them from, writes the
	// documents hosts may be served later. The search table's digest (search.sum) is still
	// written: the table holds no URL, and this service did write it.
	NoLastGood bool
}

// Actor is who asks: resolved from a token by the caller.
type Actor struct {
	Name      string   // for the audit log: "admin", "publisher:acme", "oidc:owner/repo", "sync"
	Admin     bool     // may do anything
	Publisher string   // a publisher token's publisher name
	Scope     []string // an upload token's package ids
	TokenID   string
}

// Service runs the pipeline over one store. It is safe for concurrent use.
type Service struct {
	store   Store
	blobs   Blobs
	cfg     Config
	log     *slog.Logger
	now     func() time.Time
	preload atomic.Pointer[Preload] // the first build's rows (Config.Preload), until taken

	list    atomic.Pointer[index.List]
	docs    atomic.Pointer[Documents]
	catalog atomic.Pointer[Catalog]

	// rebuildMu serialises every write that changes what the index shows (publish, yank,
	// deprecate, list swap) from its candidate build through its commit to the rebuild.
	rebuildMu   sync.Mutex
	refusal     atomic.Pointer[IndexRefusal]
	refusedList *index.List // the list of the last refused SetList, for ForceRebuild; under rebuildMu
	fallback    atomic.Pointer[Fallback]
	manifests   *manifestCache         // parsed manifests of the plugin pages shown last
	cardsDone   bool                   // BackfillCards ran (the first Rebuild); under rebuildMu
	built       *built                 // what the documents in force were built from; under rebuildMu
	persist     *persister             // writes the last good documents and search.sum off the write path
	search      searchState            // the search table as last committed; under rebuildMu
	sumFile     searchSumFile          // search.sum against the table writes (incremental.go)
	builds      *buildQueue            // publishes committed, waiting for one build of them all
	reportKey   atomic.Pointer[[]byte] // the reporter-hash key, once a report has read it

	downloads *downloadCounter
	previews  *previewJob
	health    blobHealth // blobs found damaged; their releases stay out of the documents
	host      hostState  // host-aware documents and the release table they are built from

	quar atomic.Pointer[quarantineSet] // the quarantines in force (quarantine.go)

	replica replicaState // following the change feed, sharing documents (replica.go); off by default

	oldDocFiles sync.Once // removeOldDocFiles, with the first persisted documents

	// ctx is the Service's own context: rebuilds after a committed change and their
	// retries run on it, not on a request's. Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc
	retry  retrier

	failRebuild func() error // test seam: fails rebuilds when it returns an error
	afterCommit func()       // test seam: runs right after a change is committed
	beforeBuild func()       // test seam: runs before a queued build takes rebuildMu
	// beforeInstall is a test seam: runs in a rebuild between building from the store and
	// putting the result in force.
	beforeInstall func()
}

// New returns a Service over st with the curated list l. Call Rebuild before serving. The
// blobs are cfg.Blobs, or, when that is nil, st's own folder: then st must be a
// *store.Store (New panics otherwise, a wiring mistake no request could cause).
func New(st Store, l *index.List, cfg Config, log *slog.Logger) *Service {
	if cfg.MaxShrink == 0 {
		cfg.MaxShrink = 0.5
	}
	if cfg.MaxIndexBytes == 0 {
		cfg.MaxIndexBytes = 5 << 20
	}
	if cfg.SourceName == "" {
		cfg.SourceName = "Plugin Registry"
	}
	cfg.Policy.Limit, cfg.Policy.BaseURL = cfg.MaxIndexBytes, cfg.PublicURL
	s := &Service{store: st, blobs: blobsOf(st, cfg.Blobs), cfg: cfg, log: log, now: func() time.Time { return time.Now().UTC() }, manifests: newManifestCache(manifestCacheSize)}
	s.persist = newPersister(s.writePersisted, s.writeSearchSum)
	s.builds = newBuildQueue()
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.list.Store(l)
	s.preload.Store(cfg.Preload)
	s.cfg.Preload = nil // held by s.preload until the first build takes it, not past
	s.downloads = newDownloadCounter(st, log)
	s.previews = newPreviewJob(st, s.blobs, cfg.Previews, log)
	s.previews.copied = s.refreshPreviews // so that index.json carries the copies
	return s
}

// blobsOf is the blob store a Service uses: the configured one, else the local folder of
// the embedded default's store.
func blobsOf(st Store, b Blobs) Blobs {
	if b != nil {
		return b
	}
	local, ok := st.(*store.Store)
	if !ok {
		panic(fmt.Sprintf("ingest: Config.Blobs is nil and the store (%T) has no local blob folder: pass the blob store in Config.Blobs", st))
	}
	return local.Blobs.Folder()
}

// List returns the curated list in force.
func (s *Service) List() *index.List { return s.list.Load() }

// PublicURL returns the configured public base URL (no trailing slash).
func (s *Service) PublicURL() string { return s.cfg.PublicURL }

// SetList puts a new curated list (a reload) in force together with the catalog and
// documents built from it, and only once that build succeeded: when it is refused (the
// shrink guard, a host limit) or fails, the previous list and documents stay. A refused
// list is kept for ForceRebuild.
func (s *Service) SetList(ctx context.Context, l *index.List, actor string) error {
	err := s.setList(ctx, l)
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	audit := store.AuditEntry{Actor: actor, Action: "reload", Target: "plugins.yaml", Outcome: outcome,
		Detail: map[string]any{"plugins": len(l.Plugins), "extensions": len(l.Extensions)}}
	if aerr := s.store.Audit(context.WithoutCancel(ctx), audit); aerr != nil {
		s.log.Error("audit reload", "err", aerr)
	}
	return err
}

func (s *Service) setList(ctx context.Context, l *index.List) (err error) {
	s.rebuildMu.Lock()
	defer s.rebuildMu.Unlock()
	start := time.Now()
	defer func() { s.observeRebuild(start, s.docs.Load(), err) }()
	st, err := s.loadState(ctx, l)
	if err != nil {
		return err
	}
	st.serial++ // BumpSerial below
	b, cat, docs, err := s.build(ctx, st, false)
	var lim *limitError
	if errors.As(err, &lim) {
		s.refusedList = l
		rerr := s.refuseRebuild(lim.Error())
		return &Refusal{Kind: ErrInvalid, Message: rerr.Error() + "; the previous list stays in force",
			Problems: problem.List{{Rule: lim.Rule, Severity: problem.Error, Message: lim.Reason}}}
	}
	if err != nil {
		return err
	}
	if err := s.store.BumpSerial(ctx); err != nil {
		return err
	}
	s.refusedList = nil
	return s.install(ctx, b, cat, docs, nil)
}

// Close stops the Service's background work (rebuild retries) and waits for the last good
// documents being written. Download counts are flushed by Run.
func (s *Service) Close() {
	s.cancel()
	s.persist.wait()
	s.previews.running.Wait() // a pass reading the store ends before the store is closed
}

// DownloadFlushInterval is how often serve writes download counts and, when there were
// any, rebuilds the documents: the totals in the API, on pages and in index.json are never
// more than this (plus one rebuild) behind the downloads.
const DownloadFlushInterval = 15 * time.Second

// Run flushes download counts every `every` until ctx ends, then flushes once more; each
// flush that wrote downloads refreshes the documents, so totals are live without a publish.
func (s *Service) Run(ctx context.Context, every time.Duration) {
	s.downloads.run(ctx, every, s.refreshDownloads)
}

// CountDownload records one download of a release (batched to the store).
func (s *Service) CountDownload(releaseID int64) { s.downloads.add(releaseID) }

// FlushDownloads writes pending download counts now and, when there were any, refreshes
// the documents' totals.
func (s *Service) FlushDownloads(ctx context.Context) error {
	n, rels, err := s.downloads.flush(ctx)
	if n > 0 {
		s.refreshDownloads(rels)
	}
	return err
}

// refreshDownloads brings the download totals of the releases rels (just flushed) to the
// catalog, the search rows and the index documents: only their packages are re-encoded.
// The serial does not change: totals are not a change of the catalogue.
func (s *Service) refreshDownloads(rels []int64) {
	s.rebuildMu.Lock()
	ids := s.packagesOfReleases(rels)
	s.rebuildMu.Unlock()
	if len(ids) == 0 {
		return
	}
	s.refreshPackages("download totals", ids, false)
}

// refreshPreviews brings preview copies to the documents: the listed plugins that show a
// preview are re-encoded.
func (s *Service) refreshPreviews() {
	var ids []string
	for _, e := range s.List().Plugins {
		if len(e.Previews) > 0 {
			ids = append(ids, e.ID)
		}
	}
	if len(ids) > 0 {
		s.refreshPackages("preview copies", ids, false)
	}
}

func (s *Service) audit(ctx context.Context, e store.AuditEntry) {
	if err := s.store.Audit(ctx, e); err != nil {
		s.log.Error("audit write failed", "action", e.Action, "target", e.Target, "err", err)
	}
}

// PackageURL is the absolute download URL of id@version.
func (s *Service) PackageURL(id, version string) string {
	// Each segment is escaped: ids and new versions never need it, but a version stored
	// before the SemVer rule ("1.0.0?x#y") must still give a URL that downloads it.
	return s.cfg.PublicURL + "/packages/" + url.PathEscape(FileID(id)) + "/" + url.PathEscape(PackageFileName(id, version))
}

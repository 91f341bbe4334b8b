package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/store"
)

// Preview images are copied, not hot-linked: a page that pointed at the author's host would
// show a broken image offline and in private networks, and would tell that host the address
// of every visitor. After every rebuild that puts a list in force (start, reload, publish),
// a background job fetches each preview URL of the list that has no copy yet, once, from an
// allow-listed host, and keeps its bytes as a blob; pages show the copy (/previews/…) or,
// until there is one, a placeholder with the alternative text. index.json keeps the URLs of
// plugins.yaml, which hosts fetch themselves.

// Limits and defaults of preview fetching.
const (
	// MaxPreviewSize is the largest preview image the registry copies (2 MiB), counted on
	// the bytes read, whatever Content-Length says.
	MaxPreviewSize        = 2 << 20
	DefaultPreviewTimeout = 20 * time.Second
	// DefaultPreviewRetry is how long a failed URL waits before a rebuild tries it again.
	DefaultPreviewRetry = 15 * time.Minute
	maxPreviewRedirects = 5
	previewWorkers      = 4
)

// DefaultPreviewHosts are the hosts previews are fetched from unless configured otherwise:
// where GitHub serves repository files and images attached to issues and READMEs.
var DefaultPreviewHosts = []string{"raw.githubusercontent.com", "user-images.githubusercontent.com", "github.com", "objects.githubusercontent.com"}

// PreviewHostsSetting names the setting an operator changes to allow another preview host;
// refusals cite it.
const PreviewHostsSetting = "--preview-hosts (REGISTRY_PREVIEW_HOSTS)"

// Rules a preview fetch can fail, recorded with the URL (store.Preview.Rule).
const (
	RulePreviewURL      = "preview.url"      // not an absolute https URL without credentials
	RulePreviewHost     = "preview.host"     // the URL's host is not allow-listed: never contacted
	RulePreviewRedirect = "preview.redirect" // a redirect left the allow-list or https, or looped
	RulePreviewStatus   = "preview.status"   // the answer was not 200
	RulePreviewSize     = "preview.size"     // over MaxPreviewSize
	RulePreviewType     = "preview.type"     // not PNG, JPEG or WebP by its bytes
	RulePreviewFetch    = "preview.fetch"    // the network failed or timed out
)

// PreviewConfig is how previews are fetched.
type PreviewConfig struct {
	// Hosts are the only hosts previews are fetched from, on the first URL and after every
	// redirect: "host" matches that host on port 443, "host:port" exactly. Empty: nothing
	// is fetched and pages show placeholders (copies fetched before are still served), so
	// tools and tests built on a zero Config never reach the network; `registry serve`
	// passes DefaultPreviewHosts unless told otherwise.
	Hosts     []string
	Transport http.RoundTripper // nil: a clone of http.DefaultTransport
	Timeout   time.Duration     // per URL, redirects included; 0: DefaultPreviewTimeout
	MaxSize   int64             // 0: MaxPreviewSize
	Retry     time.Duration     // 0: DefaultPreviewRetry
}

// PreviewError is why one preview URL was not copied.
type PreviewError struct {
	Rule    string
	Message string
}

func (e *PreviewError) Error() string { return e.Rule + ": " + e.Message }

func previewErrorf(rule, format string, args ...any) *PreviewError {
	return &PreviewError{Rule: rule, Message: fmt.Sprintf(format, args...)}
}

// previewExts maps each content type a copy may have to its URL extension.
var previewExts = map[string]string{"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp"}

// PreviewExt is the extension /previews/ serves a copy of this content type under, or "".
func PreviewExt(contentType string) string { return previewExts[contentType] }

// PreviewPath is where the registry serves its copy: /previews/<sha256>.<ext>.
func PreviewPath(p *store.Preview) string {
	return "/previews/" + p.SHA256 + "." + PreviewExt(p.ContentType)
}

// previewJob copies the previews of the list in force, one pass at a time on one
// goroutine; the records it holds are what pages and /previews/ read, never the database.
type previewJob struct {
	store MediaStore
	blobs Blobs
	fetch *previewFetcher // nil when no host is allow-listed
	retry time.Duration
	log   *slog.Logger
	now   func() time.Time

	records  atomic.Pointer[map[string]*store.Preview] // by URL; nil until the first pass
	listed   atomic.Pointer[listedPreviews]            // ListedPreview's index, built from records
	listedMu sync.Mutex                                // one build of listed at a time
	list     atomic.Pointer[index.List]                // the list the next pass copies
	wake     chan struct{}
	start    sync.Once
	// copied is called after a pass that copied at least one image, so that the index
	// documents gain its registry_url.
	copied func()

	mu        sync.Mutex
	requested uint64         // passes asked for
	done      uint64         // passes asked for that a finished pass covered
	idle      chan struct{}  // closed (and replaced) when a pass finishes
	running   sync.WaitGroup // the run goroutine, so Close can wait for it
}

func newPreviewJob(st MediaStore, b Blobs, cfg PreviewConfig, log *slog.Logger) *previewJob {
	j := &previewJob{store: st, blobs: b, retry: cfg.Retry, log: log, now: func() time.Time { return time.Now().UTC() },
		wake: make(chan struct{}, 1), idle: make(chan struct{})}
	if len(cfg.Hosts) > 0 {
		j.fetch = newPreviewFetcher(cfg)
	}
	if j.retry <= 0 {
		j.retry = DefaultPreviewRetry
	}
	return j
}

// request asks for a pass over l without waiting for it: a rebuild never blocks on the
// network. Requests made during a pass coalesce into one more pass.
func (j *previewJob) request(ctx context.Context, l *index.List) {
	j.list.Store(l)
	j.mu.Lock()
	j.requested++
	j.mu.Unlock()
	j.start.Do(func() {
		j.running.Add(1)
		go func() {
			defer j.running.Done()
			j.run(ctx)
		}()
	})
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

func (j *previewJob) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-j.wake:
		}
		j.mu.Lock()
		target := j.requested
		j.mu.Unlock()
		j.pass(ctx, j.list.Load())
		j.mu.Lock()
		j.done = target
		close(j.idle)
		j.idle = make(chan struct{})
		j.mu.Unlock()
	}
}

// wait returns once every pass requested before it was called has finished.
func (j *previewJob) wait(ctx context.Context) error {
	j.mu.Lock()
	target := j.requested
	for j.done < target {
		idle := j.idle
		j.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-idle:
		}
		j.mu.Lock()
	}
	j.mu.Unlock()
	return nil
}

// pass loads the records and copies every URL of l that is due, previewWorkers at a time,
// then logs one line for the whole pass.
func (j *previewJob) pass(ctx context.Context, l *index.List) {
	recs, err := j.store.Previews(ctx)
	if err != nil {
		if ctx.Err() != nil { // the service is closing: not a failure to report
			return
		}
		j.log.Error("previews: cannot read the records; pages show placeholders", "err", err)
		return
	}
	j.records.Store(&recs)
	due := j.due(l, recs)
	if len(due) == 0 {
		return
	}
	var (
		wg     sync.WaitGroup
		failed atomic.Int64
		copied atomic.Int64
		first  atomic.Pointer[store.Preview]
		sem    = make(chan struct{}, previewWorkers)
	)
	for _, u := range due {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			switch p := j.copy(ctx, u); {
			case p == nil: // not even recorded (the store failed): a failure, not a copy
				failed.Add(1)
			case p.Fetched():
				copied.Add(1)
			default:
				failed.Add(1)
				first.CompareAndSwap(nil, p)
			}
		}()
	}
	wg.Wait()
	j.summarize(len(due), failed.Load(), first.Load())
	if copied.Load() > 0 && j.copied != nil {
		j.copied()
	}
}

func (j *previewJob) summarize(tried int, failed int64, first *store.Preview) {
	if failed == 0 {
		j.log.Info(fmt.Sprintf("previews: %d copied", tried))
		return
	}
	msg := fmt.Sprintf("previews: %d tried, %d copied, %d failed; pages show placeholders for those, retried after %s",
		tried, int64(tried)-failed, failed, j.retry)
	if first == nil { // every failure was the store's own (nothing recorded); logged per URL by copy
		j.log.Warn(msg)
		return
	}
	j.log.Warn(msg, "first_url", first.URL, "rule", first.Rule, "err", first.Error)
}

// due lists, once each, the preview URLs of l without a copy whose last failure (if any)
// is older than the retry delay, or was a refused host that the allow-list now has.
func (j *previewJob) due(l *index.List, recs map[string]*store.Preview) []string {
	if j.fetch == nil || l == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, e := range l.Plugins {
		for _, pv := range e.Previews {
			if seen[pv.URL] {
				continue
			}
			seen[pv.URL] = true
			if p, ok := recs[pv.URL]; !ok || j.dueAgain(p) {
				out = append(out, pv.URL)
			}
		}
	}
	return out
}

func (j *previewJob) dueAgain(p *store.Preview) bool {
	if p.Fetched() {
		return false
	}
	if p.Rule == RulePreviewHost {
		u, err := url.Parse(p.URL)
		return err == nil && j.fetch.hosts.Allows(u)
	}
	return j.now().Sub(p.AttemptedAt) >= j.retry
}

// copy fetches one URL, stores the bytes as a blob and records the outcome; it returns the
// record (nil when even recording failed).
func (j *previewJob) copy(ctx context.Context, u string) *store.Preview {
	p, err := j.copyOne(ctx, u)
	if err != nil {
		if ctx.Err() == nil {
			j.log.Error("previews: cannot record an outcome", "url", u, "err", err)
		}
		return nil
	}
	j.remember(p)
	return p
}

func (j *previewJob) copyOne(ctx context.Context, u string) (*store.Preview, error) {
	data, ct, perr := j.fetch.fetch(ctx, u)
	if perr != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err() // closing: an interrupted fetch is not the URL's failure
		}
		return j.store.RecordPreviewFailed(ctx, u, perr.Rule, perr.Message)
	}
	sha, err := j.blobs.PutBytes(ctx, data)
	if err != nil {
		return nil, err
	}
	return j.store.RecordPreviewFetched(ctx, u, sha, ct, int64(len(data)))
}

// remember puts one record in the map pages read (copy on write: readers never lock).
func (j *previewJob) remember(p *store.Preview) {
	j.mu.Lock()
	defer j.mu.Unlock()
	next := map[string]*store.Preview{}
	if cur := j.records.Load(); cur != nil {
		maps.Copy(next, *cur)
	}
	next[p.URL] = p
	j.records.Store(&next)
}

func (j *previewJob) record(u string) (*store.Preview, bool) {
	recs := j.records.Load()
	if recs == nil {
		return nil, false
	}
	p, ok := (*recs)[u]
	return p, ok
}

// Preview returns what the registry knows of a preview URL: its copy, or why there is none
// yet. ok is false for a URL never tried.
func (s *Service) Preview(u string) (p *store.Preview, ok bool) { return s.previews.record(u) }

// ListedPreview returns the copy whose blob is sha when a listed plugin or canvas shows it,
// or nil: /previews/ serves nothing else. It looks in memory only, in a digest index that
// is rebuilt once after the catalog or the records change, so a request costs one map
// lookup however large the catalog.
func (s *Service) ListedPreview(sha string) *store.Preview {
	if len(sha) != 64 {
		return nil
	}
	return s.previews.listedIndex(s.Catalog()).bySHA[sha]
}

// listedIndex returns the digest index of cat and the records in force, building it when
// either changed; one request builds it while the others wait for it.
func (j *previewJob) listedIndex(cat *Catalog) *listedPreviews {
	recs := j.records.Load()
	if l := j.listed.Load(); l != nil && l.cat == cat && l.recs == recs {
		return l
	}
	j.listedMu.Lock()
	defer j.listedMu.Unlock()
	if l := j.listed.Load(); l != nil && l.cat == cat && l.recs == recs {
		return l
	}
	l := indexListed(cat, recs)
	j.listed.Store(l)
	return l
}

// listedPreviews indexes by digest the copies that the listed entries of cat show.
type listedPreviews struct {
	cat   *Catalog
	recs  *map[string]*store.Preview
	bySHA map[string]*store.Preview
}

func indexListed(cat *Catalog, recs *map[string]*store.Preview) *listedPreviews {
	l := &listedPreviews{cat: cat, recs: recs, bySHA: map[string]*store.Preview{}}
	if recs == nil {
		return l
	}
	for it := range cat.All() {
		if it.Entry == nil {
			continue
		}
		for _, pv := range it.Entry.Previews {
			if p, ok := (*recs)[pv.URL]; ok && p.Fetched() {
				l.bySHA[p.SHA256] = p
			}
		}
	}
	return l
}

// WaitPreviews returns once the preview passes requested so far have finished (or ctx
// ends); tools and tests call it, pages never wait.
func (s *Service) WaitPreviews(ctx context.Context) error { return s.previews.wait(ctx) }

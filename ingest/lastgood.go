package ingest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pluginyard/registry/extension"
	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/plist"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/version"
)

// lastGoodDir keeps the documents of the last successful rebuild beside the blobs, so that
// a start whose rebuild fails still serves hosts the valid index they had. They are
// durable: fsynced, and replaced only by a later successful rebuild, through one rename of
// lastGoodMeta, which is the commit point.
const (
	lastGoodDir  = "last-good"
	lastGoodMeta = "documents.json"
)

// Fallback sources: what is in force when the documents were not built from the store.
const (
	SourceLastGood = "last-good" // the last good documents, loaded from disk
	SourceEmpty    = "empty"     // an empty valid index: no last good documents existed
)

// Fallback describes documents in force that were not built from the store as it is now.
type Fallback struct {
	Source      string    `json:"source"` // SourceLastGood or SourceEmpty
	Serial      int64     `json:"serial"`
	GeneratedAt time.Time `json:"generated_at"`
	Entries     int       `json:"entries"`
	Cause       string    `json:"cause"` // why the rebuild failed
	// Suspects are the releases in force in the store most likely at fault: those whose
	// stored manifest no longer parses, then those with the largest manifests.
	Suspects []string `json:"suspects"`
	// Storage: the rebuild failed because the storage did (a full disk, an I/O error; see
	// store.IsStorageError), not for a release; it is retried in the background.
	Storage bool      `json:"storage,omitempty"`
	At      time.Time `json:"at"`

	unreadable error // why the last good documents could not be served, when they exist
}

// lastGood is the commit record of the persisted documents.
type lastGood struct {
	Serial      int64        `json:"serial"`
	GeneratedAt time.Time    `json:"generated_at"`
	Entries     int          `json:"entries"`
	Kandev      lastGoodFile `json:"kandev"`
	Curupira    lastGoodFile `json:"curupira"`
}

type lastGoodFile struct {
	File string `json:"file"` // a name inside lastGoodDir
	ETag string `json:"etag"`
	Size int    `json:"size"`
}

// ErrNoLastGood means no rebuild ever succeeded in this data directory.
var ErrNoLastGood = errors.New("no last good index documents")

// Fallback returns what is in force instead of built documents, or nil when the documents
// in force come from a rebuild.
func (s *Service) Fallback() *Fallback { return s.fallback.Load() }

func (s *Service) lastGoodPath(name string) string {
	return filepath.Join(s.store.Dir(), docDir, lastGoodDir, name)
}

// writePersisted persists docs, put in force by a successful build, as the last good
// documents (the persister calls it, off the write path); the first time, it also removes
// what older versions left in docDir (removeOldDocFiles). A failure costs only the
// freshness of the fallback: the documents are in force either way, so it is logged, not
// returned.
func (s *Service) writePersisted(docs *Documents) {
	if err := s.writeLastGood(docs); err != nil {
		s.log.Error("the last good index documents were not persisted; a refused rebuild at the next start would serve older ones", "err", err)
	}
	s.oldDocFiles.Do(s.removeOldDocFiles)
}

// removeOldDocFiles removes the files of documents that versions serving them from disk
// wrote directly under docDir (name-ETag.json, .json.gz, and their .tmp): documents are
// served from memory now, and nothing reads those files, each up to 5 MiB. The last good
// documents (in lastGoodDir) and search.sum stay. A folder without them is no error.
func (s *Service) removeOldDocFiles() {
	old, _ := filepath.Glob(filepath.Join(s.store.Dir(), docDir, "*.json*"))
	for _, p := range old {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			_ = os.Remove(p)
		}
	}
}

func (s *Service) writeLastGood(docs *Documents) error {
	dir := s.lastGoodPath("")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("ingest: last good documents: %w", err)
	}
	rec := lastGood{Serial: docs.Serial, GeneratedAt: docs.Kandev.LastModified, Entries: docs.Plugins}
	var err error
	if rec.Kandev, err = s.writeLastGoodBody("kandev", &docs.Kandev); err != nil {
		return err
	}
	if rec.Curupira, err = s.writeLastGoodBody("curupira", &docs.Curupira); err != nil {
		return err
	}
	meta, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := writeDurable(s.lastGoodPath(lastGoodMeta), index.BodyOf(meta)); err != nil {
		return fmt.Errorf("ingest: last good documents: %w", err)
	}
	s.removeStaleLastGood(rec)
	return nil
}

// writeLastGoodBody writes a body under a name derived from its ETag; an unchanged
// document (often the Curupira one) is already there and costs nothing.
func (s *Service) writeLastGoodBody(name string, d *Document) (lastGoodFile, error) {
	f := lastGoodFile{File: fmt.Sprintf("%s-%s.json", name, strings.Trim(d.ETag, `"`)), ETag: d.ETag, Size: d.Body.Len()}
	path := s.lastGoodPath(f.File)
	if fi, err := os.Stat(path); err == nil && fi.Size() == int64(f.Size) {
		return f, nil
	}
	if err := writeDurable(path, d.Body); err != nil {
		return f, fmt.Errorf("ingest: last good %s document: %w", name, err)
	}
	return f, nil
}

// removeStaleLastGood removes bodies the committed record no longer names; only after the
// commit, so that a crash at any point leaves a record whose files exist.
func (s *Service) removeStaleLastGood(rec lastGood) {
	old, _ := filepath.Glob(s.lastGoodPath("*-*.json"))
	for _, p := range old {
		if name := filepath.Base(p); name != rec.Kandev.File && name != rec.Curupira.File {
			_ = os.Remove(p)
		}
	}
}

// writeDurable writes data to path so that after a crash the path holds either its old
// content or data, whole: temporary file, fsync, rename, fsync of the folder.
func writeDurable(path string, body index.Body) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, min(body.Len(), 256<<10)) // a document's parts are entries: one write each would be thousands
	_, werr := body.WriteTo(bw)
	werr = errors.Join(werr, bw.Flush())
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// loadLastGood reads the persisted documents back, checking each body against the size
// and ETag its record names (a torn or altered file is never served).
func (s *Service) loadLastGood() (*Documents, *lastGood, error) {
	meta, err := os.ReadFile(s.lastGoodPath(lastGoodMeta))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, ErrNoLastGood
	}
	if err != nil {
		return nil, nil, fmt.Errorf("ingest: last good documents: %w", err)
	}
	var rec lastGood
	if err := json.Unmarshal(meta, &rec); err != nil {
		return nil, nil, fmt.Errorf("ingest: last good documents: %s does not decode: %w", s.lastGoodPath(lastGoodMeta), err)
	}
	kd, err := s.readLastGoodBody(rec.Kandev, rec.GeneratedAt)
	if err != nil {
		return nil, nil, err
	}
	cd, err := s.readLastGoodBody(rec.Curupira, rec.GeneratedAt)
	if err != nil {
		return nil, nil, err
	}
	return &Documents{Kandev: kd, Curupira: cd, Serial: rec.Serial, Plugins: rec.Entries}, &rec, nil
}

func (s *Service) readLastGoodBody(f lastGoodFile, at time.Time) (Document, error) {
	path := s.lastGoodPath(filepath.Base(f.File))
	body, err := os.ReadFile(path)
	if err != nil {
		return Document{}, fmt.Errorf("ingest: last good document: %w", err)
	}
	d := newDocument(body, at)
	if len(body) != f.Size || d.ETag != f.ETag {
		return Document{}, fmt.Errorf("ingest: last good document %s is %d bytes with ETag %s; its record says %d bytes, ETag %s (damaged on disk)",
			path, len(body), d.ETag, f.Size, f.ETag)
	}
	return d, nil
}

// ServeLastGood puts documents in force after the rebuild at start failed with cause: the
// last good documents from disk, else an empty valid index. The refusal records the cause
// and what is served instead; the catalog (pages, API) shows the releases those documents
// name. It does nothing when documents are already in force. The next successful rebuild
// ends the fallback. A cause that is the storage's (store.IsStorageError) names no release
// as a suspect, and the rebuild is retried in the background, as after a committed change,
// until the storage recovers.
func (s *Service) ServeLastGood(ctx context.Context, cause error) (*Fallback, error) {
	s.rebuildMu.Lock()
	defer s.rebuildMu.Unlock()
	if s.docs.Load() != nil {
		return s.fallback.Load(), nil
	}
	fb := &Fallback{Source: SourceLastGood, At: s.now()}
	if store.IsStorageError(cause) {
		fb.Storage = true
		fb.Cause = "index rebuild failed because the storage did, not for a release: " + cause.Error() +
			" (free space on, or repair, the disk of the database and the data directory; the rebuild is retried in the background)"
	} else {
		fb.Cause, fb.Suspects = causeOf(cause, s.refusal.Load()), s.suspects(ctx, 3)
	}
	docs, rec, err := s.loadLastGood()
	if err != nil {
		if !errors.Is(err, ErrNoLastGood) {
			s.log.Error("the last good index documents cannot be served", "err", err)
			fb.unreadable = err
		}
		if docs, err = s.emptyDocuments(); err != nil {
			return nil, err
		}
		fb.Source, fb.GeneratedAt = SourceEmpty, docs.Kandev.LastModified
	} else {
		fb.Serial, fb.GeneratedAt, fb.Entries = rec.Serial, rec.GeneratedAt, rec.Entries
	}
	s.catalog.Store(s.catalogOf(ctx, docs))
	s.docs.Store(docs)
	s.fallback.Store(fb)
	s.refusal.Store(&IndexRefusal{At: fb.At, Reason: fb.Reason()})
	if fb.Storage {
		s.retry.failedAtStart(s, cause)
	}
	return fb, nil
}

// Reason is the whole story: why, which releases to look at, and what is served.
func (fb *Fallback) Reason() string {
	r := fb.Cause
	if len(fb.Suspects) > 0 {
		r += "; releases to look at: " + strings.Join(fb.Suspects, ", ")
	}
	return r + "; " + fb.Describe()
}

// Describe says what is served instead of built documents, for logs and /readyz.
func (fb *Fallback) Describe() string {
	switch {
	case fb.Source == SourceEmpty && fb.unreadable != nil:
		return fmt.Sprintf("serving an empty index: the last good documents cannot be served (%v)", fb.unreadable)
	case fb.Source == SourceEmpty:
		return "serving an empty index: no rebuild ever succeeded in this data directory, so there are no last good documents"
	}
	return fmt.Sprintf("serving the last good documents (serial %d, generated %s, %d entries)",
		fb.Serial, fb.GeneratedAt.UTC().Format(time.RFC3339), fb.Entries)
}

func causeOf(cause error, refusal *IndexRefusal) string {
	if refusal != nil {
		return "index rebuild refused: " + refusal.Reason
	}
	if cause == nil {
		return "index rebuild failed"
	}
	return "index rebuild failed: " + cause.Error()
}

// emptyDocuments is a valid index without entries. Its serial is 0, below that of any
// built document, so a host that compares serials takes the next real build as newer.
func (s *Service) emptyDocuments() (*Documents, error) {
	now := s.now()
	snap := index.Snapshot{GeneratedAt: now,
		Source: index.Source{Name: s.cfg.SourceName, URL: s.cfg.PublicURL + "/index.json"}}
	kb, err := index.BuildKandev(snap)
	if err != nil {
		return nil, err
	}
	cb, err := index.BuildCurupira(snap)
	if err != nil {
		return nil, err
	}
	return &Documents{Kandev: newDocument(kb, now), Curupira: newDocument(cb, now)}, nil
}

// catalogOf is the catalog of the releases docs name, so that pages and the API agree with
// the index served; every stored release stays downloadable. It is best effort: a release
// that cannot be read is left out and logged, never a reason not to start.
func (s *Service) catalogOf(ctx context.Context, docs *Documents) *Catalog {
	cat := &Catalog{byFile: newFileIDs()}
	named, err := namedVersions(docs)
	if err != nil {
		s.log.Error("the served index documents do not decode; pages show no package", "err", err)
	}
	rels, err := s.store.AllReleases(ctx)
	if err != nil {
		s.log.Error("releases unreadable; pages show no package", "err", err)
		return cat
	}
	pkgs, err := s.store.Packages(ctx)
	if err != nil {
		s.log.Error("packages unreadable; pages show no package", "err", err)
		return cat
	}
	chosen, downloads := map[string]*store.Release{}, map[string]int64{}
	for _, r := range rels {
		cat.byFile.add(r.PackageID)
		downloads[r.PackageID] += r.Downloads
		if named[r.PackageID] == r.Version {
			chosen[r.PackageID] = r
		}
	}
	var items []*Item
	for _, it := range s.listedItemsOf(s.List(), chosen, pkgs, downloads) {
		if err := s.fillItem(ctx, it); err != nil {
			s.log.Error("release left out of the pages", "id", it.ID, "version", it.Latest.Version, "err", err)
			continue
		}
		items = append(items, it)
	}
	slices.SortFunc(items, func(a, b *Item) int { return strings.Compare(a.ID, b.ID) })
	cat.items = plist.Of(items)
	return cat
}

// namedVersions maps each id in the documents to the version they list.
func namedVersions(docs *Documents) (map[string]string, error) {
	var k struct {
		Plugins []struct{ ID, Version string } `json:"plugins"`
	}
	var c struct {
		Extensions []struct{ Name, Version string } `json:"extensions"`
	}
	out := map[string]string{}
	if err := json.Unmarshal(docs.Kandev.Body.Bytes(), &k); err != nil {
		return out, fmt.Errorf("index.json: %w", err)
	}
	if err := json.Unmarshal(docs.Curupira.Body.Bytes(), &c); err != nil {
		return out, fmt.Errorf("curupira/index.json: %w", err)
	}
	for _, p := range k.Plugins {
		out[p.ID] = p.Version
	}
	for _, e := range c.Extensions {
		out[e.Name] = e.Version
	}
	return out, nil
}

// suspects names, for the operator who must yank one, the latest listed releases that
// cannot be indexed (a stored manifest that no longer parses) and then the largest, up to
// n in all. It reads what the rebuild read; an unreadable store yields none.
func (s *Service) suspects(ctx context.Context, n int) []string {
	rels, err := s.store.AllReleases(ctx)
	if err != nil {
		return nil
	}
	latest := latestListed(rels, s.List())
	if err := s.store.FillManifests(ctx, latest); err != nil {
		return nil
	}
	sort.SliceStable(latest, func(i, j int) bool { return len(latest[i].Manifest) > len(latest[j].Manifest) })
	var broken, large []string
	for _, r := range latest {
		if name := r.PackageID + "@" + r.Version; manifestParses(r) {
			large = append(large, fmt.Sprintf("%s (%d-byte manifest)", name, len(r.Manifest)))
		} else {
			broken = append(broken, name+" (its stored manifest no longer parses)")
		}
	}
	out := append(broken, large...)
	return out[:min(n, len(out))]
}

// latestListed is each listed id's newest non-yanked release.
func latestListed(rels []*store.Release, l *index.List) []*store.Release {
	listed := map[string]bool{}
	for _, e := range l.Plugins {
		listed[e.ID] = true
	}
	for _, e := range l.Extensions {
		listed[e.Name] = true
	}
	latest := map[string]*store.Release{}
	for _, r := range rels {
		if cur, ok := latest[r.PackageID]; listed[r.PackageID] && !r.Yanked && (!ok || version.Compare(r.Version, cur.Version) > 0) {
			latest[r.PackageID] = r
		}
	}
	out := make([]*store.Release, 0, len(latest))
	for _, r := range latest {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PackageID < out[j].PackageID })
	return out
}

func manifestParses(r *store.Release) bool {
	if r.Kind == "extension" {
		m, _ := extension.Parse(r.Manifest)
		return m != nil
	}
	m, _ := manifest.Parse(r.Manifest)
	return m != nil
}

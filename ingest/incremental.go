package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/plist"
	"github.com/pluginyard/registry/store"
)

// built is what the documents in force were built from, kept so that a change to one
// package re-reads and re-encodes that package only: its rows, every listed package's
// encoded entry (both forms, in sorted sets), the shard plans, and the search rows'
// digests. It belongs to rebuildMu; nil means the next change rebuilds everything.
type built struct {
	list    *index.List
	li      *listIndex
	policy  index.Policy
	rels    map[string][]*store.Release // by package id
	pkgs    map[string]*store.Package
	relPkg  map[int64]string // release id → package id
	plugins *index.Set
	exts    *index.Set
	shards  *index.Shards
	rows    map[string]rowSum // search row digests by id
	sum     rowSum            // XOR of rows: the search table's digest
}

type rowSum [sha256.Size]byte

func (a *rowSum) xor(b rowSum) {
	for i := range a {
		a[i] ^= b[i]
	}
}

func newBuilt(st *state, p index.Policy) *built {
	b := &built{list: st.list, li: newListIndex(st.list), policy: p, rels: map[string][]*store.Release{}, pkgs: st.pkgs,
		relPkg: make(map[int64]string, len(st.rels)), rows: map[string]rowSum{}}
	for _, r := range st.rels {
		b.rels[r.PackageID] = append(b.rels[r.PackageID], r)
		b.relPkg[r.ID] = r.PackageID
	}
	return b
}

// newListIndexCached is the index of the list in force: the built one when it is for that
// list, else made now.
func newListIndexCached(s *Service) *listIndex {
	l := s.List()
	if s.built != nil && s.built.list == l {
		return s.built.li
	}
	return newListIndex(l)
}

// encode serialises an item's index entry in both forms.
func (s *Service) encode(it *Item) (*index.Encoded, error) {
	p := s.cfg.Policy
	if it.Kind == "extension" {
		return index.EncodeExtension(s.extensionEntry(it), p)
	}
	return index.EncodePlugin(s.pluginEntry(it), p)
}

// documents fits the built sets into documents at serial: index.json and the Curupira
// document under the policy, with the shard plans (unchanged shards keep their bytes).
func (s *Service) documents(b *built, serial int64) (*Documents, error) {
	at := s.now()
	h := index.Header{Serial: serial, GeneratedAt: at, Source: index.Source{Name: s.cfg.SourceName, URL: s.cfg.PublicURL + "/index.json"}}
	shards, err := index.PlanShards(b.policy, h, b.plugins, b.shards)
	if err != nil {
		return nil, fitError(err)
	}
	kd, err := index.FitKandev(b.policy, h, b.plugins, shards)
	if err != nil {
		return nil, fitError(err)
	}
	cd, err := index.FitCurupira(b.policy, h, b.exts)
	if err != nil {
		return nil, fitError(err)
	}
	b.shards = shards
	var prev *shardDocs
	if d := s.docs.Load(); d != nil {
		prev = d.shards
	}
	docs := &Documents{Kandev: docOf(kd, at), Curupira: docOf(cd, at), Serial: serial,
		Plugins: b.plugins.Len() + b.exts.Len(), Total: b.plugins.Len(), Listed: kd.Listed, Mode: kd.Mode,
		shards: newShardDocs(shards, prev)}
	return docs, nil
}

// docOf is the document of fd, its ETag from the digest every fitted Doc carries.
func docOf(fd index.Doc, at time.Time) Document {
	return newDocumentDigest(fd.Body, at, fd.Digest)
}

// fitError is a limit that holds no entry (index.size: the operator's --index-max-bytes
// is below any document), else an entry hosts cannot read (index.invalid).
func fitError(err error) error {
	if errors.Is(err, index.ErrNoFit) {
		return &limitError{Rule: "index.size", Reason: err.Error()}
	}
	return &limitError{Rule: "index.invalid", Reason: err.Error()}
}

// applyLocked brings the catalog, the documents and the search rows up to date with the
// committed state of the packages ids: their rows are read again, their entries
// re-encoded and merged into the sorted sets, and only the documents that hold them are
// rebuilt. Without a built state (a start that failed, a failure since) or after a list
// swap it rebuilds everything. rebuildMu is held.
func (s *Service) applyLocked(ctx context.Context, ids []string) (err error) {
	b := s.built
	applied := s.replica.applied.Load()
	feed, full, err := s.feedCatchUp(ctx, &ids) // a replica's build first takes in the other replicas' changes (replica.go)
	if err != nil {
		return err
	}
	if full || b == nil || b.list != s.List() || s.fallback.Load() != nil {
		return s.rebuildLocked(ctx, s.List(), false)
	}
	if s.replica.on.Load() && len(ids) == 0 && feed == applied {
		// A follower's catch-up queued behind the build that already took its serial in (a
		// replica is notified of its own publishes): the documents in force are that serial's.
		return nil
	}
	start := time.Now()
	defer func() { s.observeRebuild(start, s.docs.Load(), err) }()
	if s.failRebuild != nil {
		if err := s.failRebuild(); err != nil {
			s.built = nil
			return err
		}
	}
	s.built = nil // until this change is in force: a failure half-way leaves nothing stale
	cat := s.Catalog()
	items := cat.items // a new version of the list per change: the one in force is never written
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, id := range ids {
		if items, err = s.applyPackage(ctx, b, cat, items, id); err != nil {
			return err
		}
	}
	serial, err := s.serialFor(ctx, feed)
	if err != nil {
		return err
	}
	docs, err := s.sharedDocuments(ctx, b, serial, true)
	var lim *limitError
	if errors.As(err, &lim) {
		return s.refuseRebuild(lim.Error())
	}
	if err != nil {
		return err
	}
	return s.install(ctx, b, &Catalog{items: items, byFile: cat.byFile}, docs, ids)
}

// applyPackage re-reads package id into b and items (sorted by id). On an error b is
// half-changed and the list returned is not to be installed: the caller drops both (s.built
// is nil until install), and the catalog in force is untouched (a plist is never written).
func (s *Service) applyPackage(ctx context.Context, b *built, cat *Catalog, items plist.List[*Item], id string) (plist.List[*Item], error) {
	ps, err := s.loadPackage(ctx, id)
	if err != nil {
		return items, err
	}
	if len(ps.rels) == 0 {
		delete(b.rels, id)
	} else {
		b.rels[id] = ps.rels
		cat.byFile.add(id)
	}
	if ps.pkg != nil {
		b.pkgs[id] = ps.pkg
	}
	for _, r := range ps.rels {
		b.relPkg[r.ID] = id
	}
	it, err := s.itemFor(ctx, b.li, id, ps.rels, ps.pkg)
	if err != nil {
		return items, err
	}
	i, found := items.Search(func(it *Item) int { return strings.Compare(it.ID, id) })
	switch {
	case it == nil && found:
		items = items.Delete(i)
	case it != nil && found:
		items = items.Set(i, it)
	case it != nil:
		items = items.Insert(i, it)
	}
	if it == nil {
		b.plugins.Remove(id)
		b.exts.Remove(id)
		return items, nil
	}
	enc, err := s.encode(it)
	if err != nil {
		b.plugins.Remove(id) // no entry of the package's last state is left in b
		b.exts.Remove(id)
		return items, &limitError{Rule: "index.invalid", Reason: err.Error()}
	}
	in, other := b.plugins, b.exts
	if it.Kind == "extension" {
		in, other = b.exts, b.plugins
	}
	other.Remove(id)
	in.Put(enc) // replaces its entry in place: no shift of the sorted sets
	return items, nil
}

// packagesOfReleases maps release ids to their packages, by the built state.
func (s *Service) packagesOfReleases(relIDs []int64) []string {
	if s.built == nil {
		return nil
	}
	var out []string
	for _, id := range relIDs {
		if p, ok := s.built.relPkg[id]; ok {
			out = append(out, p)
		}
	}
	return out
}

// refreshPackages brings the documents up to date with changes outside a write (download
// totals, preview copies, blob health) to the packages ids; nil ids: all of them.
func (s *Service) refreshPackages(what string, ids []string, force bool) {
	s.rebuildMu.Lock()
	defer s.rebuildMu.Unlock()
	var err error
	if ids == nil || s.built == nil {
		err = s.rebuildLocked(s.ctx, s.List(), force)
	} else {
		err = s.applyLocked(s.ctx, ids)
	}
	if err != nil {
		s.retry.failed(s, what, err)
	}
}

// syncSearch brings the search table to cat: the rows of the packages changed, or, after a
// full build, every row, unless the table already holds exactly them (its digest says so:
// the one this process last committed, or at a start the one kept in a file beside the
// documents), as at a start with nothing changed. The digest of each committed table is
// handed to the persister (the file is not written on the publish path); a failure leaves
// the table unknown until a full build rewrites it.
func (s *Service) syncSearch(ctx context.Context, b *built, cat *Catalog, changed []string) error {
	if err := s.writeSearch(ctx, b, cat, changed); err != nil {
		s.searchCommitted(tableSum{})
		return err
	}
	return nil
}

// writeSearch is syncSearch's writes; a table written is recorded by searchCommitted.
func (s *Service) writeSearch(ctx context.Context, b *built, cat *Catalog, changed []string) error {
	if changed == nil {
		docs := searchDocs(cat)
		sums := make([]rowSum, len(docs)) // in parallel: a start's 50k digests take 40 ms of one CPU
		_ = inParallel(len(docs), func(i int) error { sums[i] = searchRowSum(docs[i]); return nil })
		b.rows, b.sum = make(map[string]rowSum, len(docs)), rowSum{}
		for i, d := range docs {
			b.rows[d.ID] = sums[i]
			b.sum.xor(sums[i])
		}
		if s.searchHolds(b.sum) {
			return nil
		}
		s.sumFile.tableWrite(s.searchSumPath())
		if err := s.store.ReplaceSearch(ctx, docs); err != nil {
			return err
		}
		s.searchCommitted(tableSum{sum: b.sum, known: true})
		return nil
	}
	var upsert []store.SearchDoc
	var gone []string
	for _, id := range changed {
		if old, ok := b.rows[id]; ok {
			b.sum.xor(old)
			delete(b.rows, id)
		}
		it, ok := cat.Item(id)
		if !ok {
			gone = append(gone, id)
			continue
		}
		d := searchDoc(it)
		h := searchRowSum(d)
		b.rows[id] = h
		b.sum.xor(h)
		upsert = append(upsert, d)
	}
	if len(gone) > 0 || len(upsert) > 0 {
		s.sumFile.tableWrite(s.searchSumPath())
	}
	if len(gone) > 0 {
		if err := s.store.DeleteSearch(ctx, gone); err != nil {
			return err
		}
	}
	if len(upsert) > 0 {
		if err := s.store.UpsertSearch(ctx, upsert); err != nil {
			return err
		}
	}
	s.searchCommitted(tableSum{sum: b.sum, known: true})
	return nil
}

// tableSum is the search table's digest, or (known false) that the table is unknown: a
// write of it failed part-way. gen is the table write it describes (searchSumFile).
type tableSum struct {
	sum   rowSum
	known bool
	gen   uint64
}

// searchSumFile keeps search.sum from ever naming a table other than the one stored. The
// file is written by the persister, after the commit it describes; meanwhile the next
// table write may already have started, and after a crash in that write the file would
// still name the table before it, which a later catalogue can equal again (a package
// published and deleted): the next start would then trust a table holding other rows.
// So a table write first removes the file (durably) when one was written since the last
// write, and counts itself; the persister writes a digest only if no table write has
// started since the one it describes.
type searchSumFile struct {
	mu      sync.Mutex
	gen     uint64 // table writes started
	removed bool   // no file on disk since the last table write removed it (false at a start: one may be there)
}

// tableWrite is called before each search table write: it removes the file if it may be
// there, syncing the folder so that the removal outlives a crash in the write.
func (f *searchSumFile) tableWrite(path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++
	if !f.removed {
		if err := os.Remove(path); err == nil {
			_ = syncDir(filepath.Dir(path))
		}
		f.removed = true
	}
}

// current is the generation of the table write just committed.
func (f *searchSumFile) current() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gen
}

// write runs w (which writes the file for t) unless a table write started after t's.
func (f *searchSumFile) write(t tableSum, w func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t.gen != f.gen {
		return // a later write's own digest follows
	}
	w()
	f.removed = false
}

// searchState is what this process last committed to the search table (set false until
// its first sync). It belongs to rebuildMu.
type searchState struct {
	set   bool
	table tableSum
}

// searchHolds reports whether the search table holds exactly the rows of digest sum: as
// this process last committed it or, before its first commit, as the file says (which then
// becomes what this process knows).
func (s *Service) searchHolds(sum rowSum) bool {
	if s.search.set {
		return s.search.table.known && s.search.table.sum == sum
	}
	stored, err := os.ReadFile(s.searchSumPath())
	if err != nil || string(stored) != hex.EncodeToString(sum[:]) {
		return false
	}
	s.search = searchState{set: true, table: tableSum{sum: sum, known: true}}
	return true
}

// searchCommitted records t as the search table's state and hands it to the persister
// (after Close nothing more is written: the file may then be older than the table). An
// unknown table is followed by a full build (install drops built), which rewrites it.
func (s *Service) searchCommitted(t tableSum) {
	t.gen = s.sumFile.current()
	s.search = searchState{set: true, table: t}
	s.persist.requestSum(t)
}

func (s *Service) searchSumPath() string { return filepath.Join(s.store.Dir(), docDir, "search.sum") }

// writeSearchSum records the search table's digest (the persister calls it, after the
// table was committed); a file older than the table (a crash in between, or before the
// persister's turn) only costs one rewrite at the next start. An unknown table, or a
// failed write, leaves no file: never a digest that may not match the table.
func (s *Service) writeSearchSum(t tableSum) {
	path := s.searchSumPath()
	s.sumFile.write(t, func() {
		if t.known {
			if err := os.MkdirAll(filepath.Dir(path), 0o750); err == nil {
				if err = writeAtomic(path, []byte(hex.EncodeToString(t.sum[:]))); err == nil {
					return
				}
			}
		}
		_ = os.Remove(path)
	})
}

// searchRowSum digests one search row, every field, each length-prefixed.
// searchRowVersion is hashed into every row digest: changing it (when what the store
// derives from a row changes, as its exact-match keys did) makes the next start rewrite the
// search table.
const searchRowVersion = "keys: every letter lower-cased"

func searchRowSum(d store.SearchDoc) rowSum {
	h := sha256.New()
	field := func(v string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(v)))
		h.Write(n[:])
		h.Write([]byte(v))
	}
	field(searchRowVersion)
	field(d.ID)
	field(d.Name)
	field(d.Description)
	field(d.Author)
	field(strings.Join(d.Categories, " "))
	field(d.Kind)
	field(d.UpdatedAt.UTC().Format(time.RFC3339))
	field(fmt.Sprint(d.Downloads))
	var out rowSum
	h.Sum(out[:0])
	return out
}

package ingest

import (
	"bytes"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/pluginyard/registry/index"
)

// docDir is the data directory's folder of derived index state: the last good documents
// (lastgood.go) and the search table's digest (search.sum). The documents themselves are
// served from memory; versions that also sent them from files left name-ETag.json and
// .json.gz files here, which removeOldDocFiles deletes.
const docDir = "index"

// GzipLevel is the compression level of the documents' gzip representation: a document
// is compressed once per serial, off the write path, and served many times.
const GzipLevel = gzip.BestCompression

// Documents of at least gzipLargeMin bytes are compressed at gzipLargeLevel instead: at
// best compression a 5 MiB index.json takes about 200 ms (a gzip reader after each change
// waits for it), at the default level about 28 ms for about 3 % more bytes.
const (
	gzipLargeMin   = 256 << 10
	gzipLargeLevel = gzip.DefaultCompression
)

// gzipLevel is the level a body of n bytes is compressed at.
func gzipLevel(n int) int {
	if n >= gzipLargeMin {
		return gzipLargeLevel
	}
	return GzipLevel
}

// docLazy is what a document makes on first use, shared by its copies: its gzip bytes.
type docLazy struct {
	gzOnce  sync.Once
	gzReady atomic.Bool
	gz      []byte
}

// Gzip is the document's gzip representation, compressed on first call (callers at the
// same time wait for the one compression).
func (d *Document) Gzip() []byte {
	if d.lazy == nil { // a Document not made by newDocument: nothing to keep it in, and no
		// field written, so that concurrent readers do not race
		return compress(d.Body)
	}
	l := d.lazy
	l.gzOnce.Do(func() {
		l.gz = compress(d.Body)
		l.gzReady.Store(true)
	})
	return l.gz
}

// GzipReady reports whether Gzip would answer without compressing.
func (d *Document) GzipReady() bool { return d.lazy != nil && d.lazy.gzReady.Load() }

// compress is body's gzip representation at gzipLevel.
func compress(body index.Body) []byte { return gzipAt(body, gzipLevel(body.Len())) }

// gzipAt is body's gzip representation at level (a valid one).
func gzipAt(body index.Body, level int) []byte {
	var buf bytes.Buffer
	buf.Grow(body.Len() / 4)
	zw, _ := gzip.NewWriterLevel(&buf, level) // a valid level: no error
	_, _ = body.WriteTo(zw)                   // writes to a bytes.Buffer do not fail
	_ = zw.Close()
	return buf.Bytes()
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o640); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// shardDocs are the shard documents of one build, each made on first request from its
// plan (index.ShardPlan), so that a change builds none and a request builds only its own.
// A plan a later build keeps (unchanged entries) keeps its document and validators.
type shardDocs struct {
	plans *index.Shards
	mu    sync.Mutex
	docs  map[*index.ShardPlan]*Document
	list  *Document // the shard list (index.ShardListName), made on first request
}

func newShardDocs(plans *index.Shards, prev *shardDocs) *shardDocs {
	sd := &shardDocs{plans: plans, docs: map[*index.ShardPlan]*Document{}}
	if prev == nil {
		return sd
	}
	prev.mu.Lock()
	defer prev.mu.Unlock()
	for _, p := range plans.Plans {
		if d, ok := prev.docs[p]; ok {
			sd.docs[p] = d
		}
	}
	return sd
}

// Shard returns the shard document named name ("tools.json", "all.a.json"), built on first
// use; false when no shard has that name.
func (d *Documents) Shard(name string) (*Document, bool, error) {
	if d.shards == nil {
		return nil, false, nil
	}
	sd := d.shards
	if name == index.ShardListName {
		return sd.listDoc(d.Kandev.LastModified)
	}
	sp, ok := sd.plans.Plan(name)
	if !ok {
		return nil, false, nil
	}
	sd.mu.Lock()
	defer sd.mu.Unlock()
	if doc, ok := sd.docs[sp]; ok {
		return doc, true, nil
	}
	doc, err := sp.Doc()
	if err != nil {
		return nil, true, err
	}
	built := docOf(doc, sp.GeneratedAt())
	sd.docs[sp] = &built
	return &built, true, nil
}

// listDoc is the shard list of this build (every shard URL), made once.
func (sd *shardDocs) listDoc(at time.Time) (*Document, bool, error) {
	sd.mu.Lock()
	defer sd.mu.Unlock()
	if sd.list == nil {
		body, err := sd.plans.List()
		if err != nil {
			return nil, true, err
		}
		doc := newDocument(body, at)
		sd.list = &doc
	}
	return sd.list, true, nil
}

// ShardURLs are the shard documents' URLs: the id shards (together, every entry in full)
// and the category shards.
func (d *Documents) ShardURLs() (ids, categories []string) {
	if d == nil || d.shards == nil {
		return []string{}, []string{}
	}
	return d.shards.plans.URLs()
}

// Partial reports whether index.json holds fewer than every entry in full (then the shards
// hold the rest, and the home page and /docs name them).
func (d *Documents) Partial() bool { return d != nil && d.Mode != "" && d.Mode != index.ModeFull }

// persistInterval is the least time between two writes of the last good documents: a
// burst of changes writes the newest documents once per interval, not once per change
// (each write fsyncs up to two 5 MiB bodies). A start serves documents at most this old
// after a crash; Close writes the newest at once.
const persistInterval = 2 * time.Second

// persister writes the last good documents (fsynced) and the search table's digest
// (search.sum) off the write path: the newest of each handed to it is written once the
// previous write is done and persistInterval has passed; documents or digests superseded
// before their turn are skipped. wait (Close) writes what is pending at once and returns
// when it is written.
type persister struct {
	mu       sync.Mutex
	pending  *Documents
	sum      *tableSum // the search table's digest to record, nil when none is pending
	running  bool
	closing  chan struct{}
	closed   bool
	idle     *sync.Cond
	write    func(*Documents)
	writeSum func(tableSum)
}

func newPersister(write func(*Documents), writeSum func(tableSum)) *persister {
	p := &persister{write: write, writeSum: writeSum, closing: make(chan struct{})}
	p.idle = sync.NewCond(&p.mu)
	return p
}

// request hands over the documents in force; after wait (Close) nothing more is written.
func (p *persister) request(docs *Documents) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending = docs
	p.start()
}

// requestSum hands over the search table's digest, once the table it describes is
// committed (a digest newer than the table would skip a rewrite it needs); after wait
// (Close) nothing more is written, and search.sum may be older than the table.
func (p *persister) requestSum(sum tableSum) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sum = &sum
	p.start()
}

// start runs the loop unless it runs or wait was called; p.mu is held. Checked here, under
// p.mu, a request as Close runs is either written before wait returns or not at all.
func (p *persister) start() {
	if !p.running && !p.closed {
		p.running = true
		go p.loop()
	}
}

func (p *persister) loop() {
	for {
		p.mu.Lock()
		docs, sum := p.pending, p.sum
		p.pending, p.sum = nil, nil
		if docs == nil && sum == nil {
			p.running = false
			p.idle.Broadcast()
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		if docs != nil {
			p.write(docs)
		}
		if sum != nil {
			p.writeSum(*sum)
		}
		select {
		case <-time.After(persistInterval):
		case <-p.closing:
		}
	}
}

// wait writes what is pending without further delay and returns once nothing is pending
// or being written.
func (p *persister) wait() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		close(p.closing)
	}
	for p.running {
		p.idle.Wait()
	}
}

package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/pluginyard/registry/index"
)

// docDir is where the built documents are also kept as files, under the data directory,
// so the server can hand them to the kernel (sendfile) as a static file server would. They
// are derived data, written on first use of each document (BodyFile, Gzip).
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

// docLazy is what a document makes on first use, shared by its copies: its body's file,
// its gzip bytes and their file.
type docLazy struct {
	dir       string    // where the files go; "" keeps them in memory only
	name      string    // "kandev" | "curupira" | a shard's name
	born      time.Time // when the document was built (bodyFileDelay counts from it)
	bodyOnce  sync.Once
	bodyStart atomic.Bool // the write was started
	bodyReady atomic.Bool // bodyFile is set (the write ended, written or not)
	bodyFile  string
	gzOnce    sync.Once
	gzReady   atomic.Bool
	gz        []byte
	gzFile    string
}

// bodyFileDelay is how long a document is served from memory before its file is written:
// under a stream of changes (a publish every few milliseconds) each document is superseded
// before then, so none of them costs a write of up to 5 MiB that no reader would use.
const bodyFileDelay = 500 * time.Millisecond

// BodyFile is the document's body on disk, for zero-copy serving; "" until it is written
// (the bytes are then served from memory). The first call once the document is
// bodyFileDelay old starts the write in the background: no request waits for a file after
// a change.
func (d *Document) BodyFile() string {
	if d.lazy == nil {
		return ""
	}
	l := d.lazy
	if l.bodyReady.Load() {
		return l.bodyFile
	}
	if time.Since(l.born) < bodyFileDelay {
		return ""
	}
	l.bodyOnce.Do(func() {
		l.bodyStart.Store(true)
		go d.writeBodyFile()
	})
	return ""
}

func (d *Document) writeBodyFile() {
	l := d.lazy
	defer l.bodyReady.Store(true)
	if l.dir == "" {
		return
	}
	path := filepath.Join(l.dir, fmt.Sprintf("%s-%s.json", l.name, strings.Trim(d.ETag, `"`)))
	if fi, err := os.Stat(path); err == nil && fi.Size() == int64(len(d.Body)) {
		l.bodyFile = path
		return
	}
	if err := os.MkdirAll(l.dir, 0o750); err == nil && writeAtomic(path, d.Body) == nil {
		l.bodyFile = path
	}
}

// Gzip is the document's gzip representation, compressed on first call (callers at the
// same time wait for the one compression).
func (d *Document) Gzip() []byte {
	gz, _ := d.gzip()
	return gz
}

// GzipFile is the file holding Gzip's bytes ("" when only in memory); it compresses first
// when needed.
func (d *Document) GzipFile() string {
	_, f := d.gzip()
	return f
}

// GzipReady reports whether Gzip would answer without compressing.
func (d *Document) GzipReady() bool { return d.lazy != nil && d.lazy.gzReady.Load() }

func (d *Document) gzip() ([]byte, string) {
	if d.lazy == nil { // a Document not made by newDocument: nothing to keep it in, and no
		// field written, so that concurrent readers do not race
		return compress(d.Body), ""
	}
	l := d.lazy
	l.gzOnce.Do(func() {
		l.gz = compress(d.Body)
		if l.dir != "" {
			path := filepath.Join(l.dir, fmt.Sprintf("%s-%s.json.gz", l.name, strings.Trim(d.ETag, `"`)))
			if err := os.MkdirAll(l.dir, 0o750); err == nil && writeAtomic(path, l.gz) == nil {
				l.gzFile = path
			}
		}
		l.gzReady.Store(true)
	})
	return l.gz, l.gzFile
}

// compress is body's gzip representation at gzipLevel.
func compress(body []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(body) / 4)
	zw, _ := gzip.NewWriterLevel(&buf, gzipLevel(len(body))) // a valid level: no error
	_, _ = zw.Write(body)                                    // writes to a bytes.Buffer do not fail
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
	dir   string
	mu    sync.Mutex
	docs  map[*index.ShardPlan]*Document
	list  *Document // the shard list (index.ShardListName), made on first request
}

func newShardDocs(plans *index.Shards, dir string, prev *shardDocs) *shardDocs {
	sd := &shardDocs{plans: plans, dir: dir, docs: map[*index.ShardPlan]*Document{}}
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
	built := newDocument(doc.Body, sp.GeneratedAt())
	built.lazy.dir, built.lazy.name = sd.dir, "shard-"+strings.TrimSuffix(name, ".json")
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

// persister writes the last good documents (fsynced) off the write path: the newest
// documents in force are written once the previous write is done and persistInterval has
// passed; documents superseded before their turn are skipped. wait (Close) writes what is
// pending at once and returns when it is written.
type persister struct {
	mu      sync.Mutex
	pending *Documents
	running bool
	closing chan struct{}
	closed  bool
	idle    *sync.Cond
	write   func(*Documents)
}

func newPersister(write func(*Documents)) *persister {
	p := &persister{write: write, closing: make(chan struct{})}
	p.idle = sync.NewCond(&p.mu)
	return p
}

func (p *persister) request(docs *Documents) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending = docs
	if !p.running {
		p.running = true
		go p.loop()
	}
}

func (p *persister) loop() {
	for {
		p.mu.Lock()
		docs := p.pending
		p.pending = nil
		if docs == nil {
			p.running = false
			p.idle.Broadcast()
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		p.write(docs)
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

package index

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Orders in which a partial document chooses entries, after official and featured ones.
const (
	OrderDownloads = "downloads" // most downloaded first
	OrderRecent    = "recent"    // most recently updated first
)

// DefaultDescriptionMax is how many runes of a description a compact entry keeps.
const DefaultDescriptionMax = 200

// Ellipsis marks a description a compact entry cut.
const Ellipsis = "…"

// Modes of a fitted document.
const (
	ModeFull     = "full"     // every entry, every field
	ModeCompact  = "compact"  // every entry, optional fields moved out (EncodeKandev)
	ModeSelected = "selected" // compact entries chosen by rank until the limit
)

// ErrNoFit means not even one compact entry fits the limit: the limit is too small for any
// document (every entry's fields are bounded, so 5 MiB always holds one).
var ErrNoFit = errors.New("index: the size limit is too small for any document")

// Policy decides what an index document holds when the catalogue does not fit the host
// limit (docs/index-at-scale.md): full entries if they fit, else compact entries, else
// compact entries chosen by rank (official, featured, then Order) until the limit.
type Policy struct {
	Limit          int    // bytes a document may have; 0: MaxKandevSize
	Order          string // OrderDownloads (default) or OrderRecent
	DescriptionMax int    // runes a compact description keeps; 0: DefaultDescriptionMax
	// BaseURL prefixes the absolute URLs a document names: shards (BaseURL + ShardPath +
	// "/" + name) and compact entries' details_url (BaseURL + "/api/v1/index/{id}.json").
	BaseURL   string
	ShardPath string // where shards are served; "" : "/index"
}

func (p Policy) limit() int {
	if p.Limit <= 0 {
		return MaxKandevSize
	}
	return p.Limit
}

func (p Policy) order() string {
	if p.Order == OrderRecent {
		return OrderRecent
	}
	return OrderDownloads
}

func (p Policy) descriptionMax() int {
	if p.DescriptionMax <= 0 {
		return DefaultDescriptionMax
	}
	return p.DescriptionMax
}

// ShardURL is the absolute URL of the shard named name ("tools.json", "all.a.json").
func (p Policy) ShardURL(name string) string {
	path := p.ShardPath
	if path == "" {
		path = "/index"
	}
	return p.BaseURL + path + "/" + name
}

// Encoded is one entry serialised in both forms, with what ranking and sharding need.
// Encoded values are immutable once made: caches keep them and documents share them.
type Encoded struct {
	ID         string
	Categories []string
	Official   bool
	Featured   bool
	Archived   bool // ranks after every active entry
	Downloads  int64
	UpdatedAt  time.Time
	Full       []byte // every field
	Compact    []byte // the policy's compact form
	// compactForm and fullForm are what documents join and digest of each form (form),
	// made by EncodePlugin and EncodeExtension, or on first use for an Encoded made
	// otherwise.
	compactForm atomic.Pointer[form]
	fullForm    atomic.Pointer[form]
}

// Partial is the top-level "partial" object of a document that does not hold every entry
// in full: hosts ignore it (an unknown field); operators and tools read where the rest is.
type Partial struct {
	Total          int      `json:"total"`  // entries in the catalogue (of this document's scope)
	Listed         int      `json:"listed"` // entries in this document
	Policy         string   `json:"policy"` // ModeCompact or ModeSelected
	Order          string   `json:"order"`
	DescriptionMax int      `json:"description_max"`
	Shards         []string `json:"shards"` // id shards: together, every entry in full
	// ShardList is the URL of the shard list document, set (and Shards left empty) when
	// naming every id shard here would take more than an eighth of the limit.
	ShardList      string   `json:"shard_list,omitempty"`
	CategoryShards []string `json:"category_shards,omitempty"` // one per category
}

// Header is what a document says of itself, before its entries.
type Header struct {
	Serial      int64
	GeneratedAt time.Time
	Source      Source // Kandev documents only
}

// Shard is one shard document.
type Shard struct {
	Name    string // "tools.json" (a category) or "all.{prefix}.json" (ids with that prefix)
	URL     string
	Body    []byte
	Entries int
	Mode    string
	IDs     []string // for id shards: the ids it holds, sorted
}

// Fitted is a Kandev and a Curupira document within the policy's limit, with the shards
// that hold every entry.
type Fitted struct {
	Kandev         []byte
	KandevMode     string
	Listed, Total  int
	Curupira       []byte
	CurupiraMode   string
	Shards         []Shard // id shards first (sorted by name), then category shards
	IDShards       int     // how many of Shards are id shards
	Partial        bool    // Kandev is not ModeFull
	CurupiraListed int
}

// Fit builds the documents of s under p: the Kandev document, its shards and the Curupira
// document, each at most p's limit. It is what the registry's own rebuild does, for callers
// that hold a whole snapshot (host-aware documents). ErrNoFit when the limit holds no entry.
func Fit(p Policy, s Snapshot) (Fitted, error) {
	if s.GeneratedAt.IsZero() {
		return Fitted{}, errors.New("index: fit: GeneratedAt is zero")
	}
	plugins := make([]*Encoded, 0, len(s.Plugins))
	for _, pl := range s.Plugins {
		e, err := EncodePlugin(pl, p)
		if err != nil {
			return Fitted{}, fmt.Errorf("index: fit: %w", err)
		}
		plugins = append(plugins, e)
	}
	exts := make([]*Encoded, 0, len(s.Extensions))
	for _, x := range s.Extensions {
		e, err := EncodeExtension(x, p)
		if err != nil {
			return Fitted{}, fmt.Errorf("index: fit: %w", err)
		}
		exts = append(exts, e)
	}
	set, err := NewSet(p.order(), plugins)
	if err != nil {
		return Fitted{}, fmt.Errorf("index: fit: %w", err)
	}
	xset, err := NewSet(p.order(), exts)
	if err != nil {
		return Fitted{}, fmt.Errorf("index: fit: %w", err)
	}
	h := Header{Serial: s.Serial, GeneratedAt: s.GeneratedAt, Source: s.Source}
	var f Fitted
	plans, err := PlanShards(p, h, set, nil)
	if err != nil {
		return Fitted{}, err
	}
	if f.Shards, err = buildPlans(plans); err != nil {
		return Fitted{}, err
	}
	for _, sh := range f.Shards {
		if isIDShard(sh.Name) {
			f.IDShards++
		}
	}
	main, err := FitKandev(p, h, set, plans)
	if err != nil {
		return Fitted{}, err
	}
	f.Kandev, f.KandevMode, f.Listed, f.Total, f.Partial = main.Body.Bytes(), main.Mode, main.Listed, set.Len(), main.Mode != ModeFull
	cd, err := FitCurupira(p, h, xset)
	if err != nil {
		return Fitted{}, err
	}
	f.Curupira, f.CurupiraMode, f.CurupiraListed = cd.Body.Bytes(), cd.Mode, cd.Listed
	return f, nil
}

// Doc is one fitted document.
type Doc struct {
	Body   Body // the parts it is joined from (shared with its entries: never written)
	Mode   string
	Listed int
	// Digest is Digest(Body.Bytes()), computed from the kept chunk digests of its entries.
	Digest [sha256.Size]byte
}

// FitKandev fits the entries of set into one Kandev document under p; the shards (from
// PlanShards) are named in its partial object when it is not full. The set keeps the
// document's blocks (blocks.go): the next build rebuilds only those its changes fall in.
func FitKandev(p Policy, h Header, set *Set, shards *Shards) (Doc, error) {
	ids, cats := shards.URLs()
	if set.kept == nil {
		set.kept = &kept{order: set.order}
	}
	k := set.kept
	k.removed, k.added, k.known = set.takeChanges()
	d, err := fitDoc(p, kandevHead(h), set.ByID(), set.sizes(), set.ByRank, set.Len(), ids, cats, k)
	if err != nil {
		k.mode = "" // the changes taken are not in the blocks: the next build makes them anew
	}
	return d, err
}

// FitCurupira fits the extensions of set into one Curupira document under p. Extensions
// have no shards: a partial Curupira document names none.
func FitCurupira(p Policy, h Header, set *Set) (Doc, error) {
	return fitDoc(p, curupiraHead(h), set.ByID(), set.sizes(), set.ByRank, set.Len(), []string{}, nil, nil)
}

// sizes are the bytes of a set's entries joined by commas, in full and compact form.
type sizes struct{ full, compact int }

func (s *Set) sizes() sizes {
	n := max(len(s.byID)-1, 0)
	return sizes{full: s.full + n, compact: s.compact + n}
}

func sizesOf(entries []*Encoded) sizes {
	z := sizes{full: max(len(entries)-1, 0), compact: max(len(entries)-1, 0)}
	for _, e := range entries {
		z.full, z.compact = z.full+len(e.Full), z.compact+len(e.Compact)
	}
	return z
}

// fitDoc applies the policy to entries (sorted by id, their joined sizes z; ranked returns
// them by rank).
func fitDoc(p Policy, head []byte, entries []*Encoded, z sizes, ranked func() []*Encoded, total int, shards, cats []string, k *kept) (Doc, error) {
	limit := p.limit()
	if len(head)+len(`]}`)+z.full <= limit {
		if k != nil {
			return k.whole(head, entries, false, nil, ModeFull), nil
		}
		return joinedDoc(head, entries, false, nil, ModeFull), nil
	}
	part := Partial{Total: total, Listed: total, Policy: ModeCompact, Order: p.order(), DescriptionMax: p.descriptionMax(),
		Shards: shards, CategoryShards: cats}
	if urlBytes(shards) > limit/8 { // the list would crowd out entries: name where it is
		part.Shards, part.ShardList = nil, p.ShardURL(ShardListName)
	}
	tail, err := partialTail(part)
	if err != nil {
		return Doc{}, err
	}
	if len(head)+len(tail)+z.compact <= limit {
		if k != nil {
			return k.whole(head, entries, true, tail, ModeCompact), nil
		}
		return joinedDoc(head, entries, true, tail, ModeCompact), nil
	}
	part.Policy = ModeSelected
	if tail, err = partialTail(part); err != nil { // listed = total: the longest it can be
		return Doc{}, err
	}
	budget := limit - len(head) - len(tail)
	var chosen []*Encoded
	if k != nil {
		chosen = make([]*Encoded, 0, len(k.ranked)+16)
	}
	for _, e := range ranked() {
		need := len(e.Compact) + min(len(chosen), 1)
		if need > budget {
			break
		}
		budget -= need
		chosen = append(chosen, e)
	}
	if len(chosen) == 0 && total > 0 {
		return Doc{}, fmt.Errorf("%w: a %d-byte host cap holds no entry (the smallest document with one is over it); raise --index-max-bytes", ErrNoFit, limit)
	}
	if budget < 0 {
		return Doc{}, fmt.Errorf("%w: a %d-byte host cap does not hold even the document's header and partial object; raise --index-max-bytes", ErrNoFit, limit)
	}
	part.Listed = len(chosen)
	if tail, err = partialTail(part); err != nil {
		return Doc{}, err
	}
	if k != nil {
		return k.choose(head, chosen, tail), nil
	}
	return joinedDoc(head, slices.SortedFunc(slices.Values(chosen), byIDCompare), true, tail, ModeSelected), nil
}

// kept is what FitKandev keeps of the last document it built from a Set: its mode, its
// entries in blocks and, when it was selected, its choice by rank, so that the next build,
// choosing mostly the same entries, finds what changed by one walk over the two rank
// orders instead of sorting its choice again. removed, added and known are the Set's
// changes since (takeChanges), for documents of every entry.
type kept struct {
	order          string
	mode           string     // the last document's mode; "" when nothing is kept
	ranked         []*Encoded // ModeSelected: the last choice, by rank
	blocks         *blocks
	removed, added []*Encoded
	known          bool
}

// whole is the document of every entry (sorted by id) in one form: the kept blocks with
// the Set's changes applied when the last document was of mode, else new blocks.
func (k *kept) whole(head []byte, entries []*Encoded, compact bool, tail []byte, mode string) Doc {
	if k.mode == mode && k.known {
		k.blocks.apply(k.removed, k.added)
	} else {
		k.blocks = newBlocks(entries, compact)
	}
	k.mode, k.ranked = mode, nil
	return k.blocks.doc(head, closer(tail), mode)
}

// choose is the selected document of chosen (entries by rank, owned by k from now on): the
// kept blocks with what joined and left the choice applied when the blocks are of the last
// selected document (ranked is kept with them; a refused build since changes neither) and
// few changed, else new blocks.
func (k *kept) choose(head []byte, chosen []*Encoded, tail []byte) Doc {
	added, removed, ok := rankDiff(k.ranked, chosen, rankCompare(k.order), len(chosen)/8)
	if k.ranked != nil && ok {
		k.blocks.apply(removed, added)
	} else {
		k.blocks = newBlocks(slices.SortedFunc(slices.Values(chosen), byIDCompare), true)
	}
	k.mode, k.ranked = ModeSelected, chosen
	return k.blocks.doc(head, closer(tail), ModeSelected)
}

// rankDiff walks old and chosen, both sorted by cmpf, and returns the entries only chosen
// holds (added) and only old holds (removed); false when more than limit differ (new blocks
// are then cheaper).
func rankDiff(old, chosen []*Encoded, cmpf func(a, b *Encoded) int, limit int) (added, removed []*Encoded, ok bool) {
	i, j := 0, 0
	for i < len(old) || j < len(chosen) {
		switch {
		case i == len(old):
			added, j = append(added, chosen[j]), j+1
		case j == len(chosen):
			removed, i = append(removed, old[i]), i+1
		case old[i] == chosen[j]:
			i, j = i+1, j+1
		default:
			c := cmpf(old[i], chosen[j])
			if c <= 0 {
				removed, i = append(removed, old[i]), i+1
			}
			if c >= 0 {
				added, j = append(added, chosen[j]), j+1
			}
		}
		if len(added)+len(removed) > limit {
			return nil, nil, false
		}
	}
	return added, removed, true
}

func byIDCompare(a, b *Encoded) int { return strings.Compare(a.ID, b.ID) }

// form is what a document needs of one form (compact or full) of an entry, kept together so
// that a build reads one object per entry: seg, "," + the form's bytes (the form shares
// them), what follows the entry before it in a document; object, whether the bytes are a
// JSON object ({…}), without which no chunk need end between entries; and, made on first
// use (a start encodes every entry, and most full forms are never digested), the chunk
// digests (Digest) of seg, the same wherever the entry stands between two others (a chunk
// ends before every "," that follows an entry).
type form struct {
	seg    []byte
	object bool
	once   sync.Once
	sums   []byte
}

// formOfSegment is the form whose seg is seg ("," + the form's bytes), kept.
func formOfSegment(seg []byte) *form {
	b := seg[1:]
	return &form{seg: seg, object: len(b) >= 2 && b[0] == '{' && b[len(b)-1] == '}'}
}

// chunkSums are the chunk digests of seg.
func (f *form) chunkSums() []byte {
	f.once.Do(func() { f.sums = appendChunkSums(nil, f.seg) })
	return f.sums
}

// form is e's compact (or full) form.
func (e *Encoded) form(compact bool) *form {
	p := &e.fullForm
	if compact {
		p = &e.compactForm
	}
	if f := p.Load(); f != nil {
		return f
	}
	f := formOfSegment(append([]byte{','}, e.bytes(compact)...))
	p.Store(f)
	return f
}

// joinedDoc is the document of head, entries (in that order, in compact or full form,
// comma-separated), "]" and tail (which closes the object; "]}" without one), as the parts
// it is joined from: head, each entry's kept bytes, the closing bytes. No entry is copied.
//
// Its Digest is made from the entries' kept chunk digests: the first entry is hashed with
// head, the last with the closing bytes, the others not at all. When no chunk need end
// between entries (fewer than two, or entries that are not objects) the joined bytes are
// hashed.
func joinedDoc(head []byte, entries []*Encoded, compact bool, tail []byte, mode string) Doc {
	closer := closer(tail)
	parts := make([][]byte, 0, len(entries)+2)
	parts = append(parts, head)
	h := sha256.New()
	g := newGrouper(h)
	chunked := len(entries) >= 2
	for i, e := range entries {
		f := e.form(compact)
		chunked = chunked && f.object
		switch {
		case i == 0:
			parts = append(parts, f.seg[1:])
			if chunked {
				writeChunkSums(g, append(slices.Clip(head), f.seg[1:]...))
			}
		case i == len(entries)-1:
			parts = append(parts, f.seg)
			if chunked {
				writeChunkSums(g, append(slices.Clip(f.seg), closer...))
			}
		default:
			parts = append(parts, f.seg)
			if chunked {
				g.Write(f.chunkSums())
			}
		}
	}
	parts = append(parts, closer)
	d := Doc{Body: NewBody(parts), Mode: mode, Listed: len(entries)}
	if !chunked {
		d.Digest = Digest(d.Body.Bytes())
		return d
	}
	g.end()
	h.Sum(d.Digest[:0])
	return d
}

var closeArray = []byte("]}")

// closer is what follows a document's last entry: "]" and tail (which closes the object),
// "]}" without one.
func closer(tail []byte) []byte {
	if tail == nil {
		return closeArray
	}
	return append([]byte{']'}, tail...)
}

// Digest is what a document's strong validator (ETag) is made of: the SHA-256 of the
// SHA-256 digests of body's chunks, a chunk ending at every "}" that ",{" follows outside a
// JSON string (between two objects of an array: a document's entries; "},{" inside a
// description ends no chunk, so text of "},{" over and over costs what plain text costs). It is a function of the bytes alone, so a
// body read back is checked by it, and a document differing from the last in a few entries
// is digested by hashing only those entries' chunks (a selected index.json keeps the
// others'). Two bodies with one Digest have the same chunks, so the same bytes.
func Digest(body []byte) [sha256.Size]byte {
	h := sha256.New()
	g := newGrouper(h)
	writeChunkSums(g, body) // not the sums kept: a body of "},{" has a chunk every 3 bytes
	g.end()
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// appendChunkSums appends the SHA-256 of each of b's chunks (Digest) to sums.
func appendChunkSums(sums, b []byte) []byte {
	buf := bytes.NewBuffer(sums)
	writeChunkSums(buf, b)
	return buf.Bytes()
}

// writeChunkSums writes the SHA-256 of each of b's chunks (Digest) to w, a hash or a
// bytes.Buffer (whose writes do not fail). Strings are skipped whole (a quote not escaped by
// an odd run of backslashes opens or closes one), so only structure can end a chunk.
func writeChunkSums(w io.Writer, b []byte) {
	var sum [sha256.Size]byte // one array for every chunk (w copies what it is given)
	start := 0
	for i := 0; i < len(b); {
		end := len(b) // the next string's opening quote, or the end
		if q := bytes.IndexByte(b[i:], '"'); q >= 0 {
			end = i + q
		}
		for j := i; j < end; { // ",{" in b[i:end], outside strings
			k := bytes.Index(b[j:end], []byte(",{"))
			if k < 0 {
				break
			}
			j += k
			if j > 0 && b[j-1] == '}' {
				sum = sha256.Sum256(b[start:j])
				w.Write(sum[:])
				start = j
			}
			j++
		}
		i = stringEnd(b, end)
	}
	sum = sha256.Sum256(b[start:])
	w.Write(sum[:])
}

// stringEnd is where the JSON string whose opening quote is at b[open] ends (just past its
// closing quote; len(b) when it does not close, or open is len(b)).
func stringEnd(b []byte, open int) int {
	for k := open + 1; k < len(b); {
		q := bytes.IndexByte(b[k:], '"')
		if q < 0 {
			return len(b)
		}
		k += q
		n := 0 // backslashes just before the quote
		for n < k-open-1 && b[k-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return k + 1
		}
		k++
	}
	return len(b)
}

func (e *Encoded) bytes(compact bool) []byte {
	if compact {
		return e.Compact
	}
	return e.Full
}

// urlBytes is what naming urls in a JSON array costs.
func urlBytes(urls []string) int {
	n := 2
	for _, u := range urls {
		n += len(u) + 3
	}
	return n
}

// partialTail is `,"partial":{…}}`: the rest of a partial document after its entries.
func partialTail(p Partial) ([]byte, error) {
	if p.Shards == nil {
		p.Shards = []string{}
	}
	b, err := marshal(p)
	if err != nil {
		return nil, fmt.Errorf("index: partial: %w", err)
	}
	out := append([]byte(`,"partial":`), b...)
	return append(out, '}'), nil
}

func kandevHead(h Header) []byte {
	src, _ := marshal(h.Source) // two strings: cannot fail
	var b []byte
	b = append(b, `{"schema_version":1,"generated_at":"`...)
	b = append(b, formatTime(h.GeneratedAt)...)
	b = append(b, `","source":`...)
	b = append(b, src...)
	b = append(b, `,"serial":`...)
	b = strconv.AppendInt(b, h.Serial, 10)
	return append(b, `,"plugins":[`...)
}

func curupiraHead(h Header) []byte {
	var b []byte
	b = append(b, `{"schema_version":1,"generated_at":"`...)
	b = append(b, formatTime(h.GeneratedAt)...)
	b = append(b, `","serial":`...)
	b = strconv.AppendInt(b, h.Serial, 10)
	return append(b, `,"extensions":[`...)
}

// rankCompare orders entries for selection: active before archived (an archived package
// expects no releases, so a partial index spends its room on live ones first), official,
// then featured, then by order (downloads or recent), then by id.
func rankCompare(order string) func(a, b *Encoded) int {
	return func(a, b *Encoded) int {
		if a.Archived != b.Archived {
			return boolFirst(b.Archived)
		}
		if a.Official != b.Official {
			return boolFirst(a.Official)
		}
		if a.Featured != b.Featured {
			return boolFirst(a.Featured)
		}
		if order == OrderRecent {
			if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
				return c
			}
		} else if c := cmp.Compare(b.Downloads, a.Downloads); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	}
}

func boolFirst(a bool) int {
	if a {
		return -1
	}
	return 1
}

// TruncateRunes cuts s to at most max runes, ending it with Ellipsis (counted in max) when
// it was cut.
func TruncateRunes(s string, max int) string {
	n := 0
	for i := range s {
		if n == max-1 {
			if utf8.RuneCountInString(s[i:]) > 1 {
				return s[:i] + Ellipsis
			}
			return s
		}
		n++
	}
	return s
}

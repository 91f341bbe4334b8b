package index

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
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
	// sums are the chunk digests (Digest) of "," + Compact, made by the first document
	// that holds the entry between two others in compact form; fullSums the same of
	// "," + Full.
	sums     atomic.Pointer[[]byte]
	fullSums atomic.Pointer[[]byte]
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
	f.Kandev, f.KandevMode, f.Listed, f.Total, f.Partial = main.Body, main.Mode, main.Listed, set.Len(), main.Mode != ModeFull
	cd, err := FitCurupira(p, h, xset)
	if err != nil {
		return Fitted{}, err
	}
	f.Curupira, f.CurupiraMode, f.CurupiraListed = cd.Body, cd.Mode, cd.Listed
	return f, nil
}

// Doc is one fitted document.
type Doc struct {
	Body   []byte
	Mode   string
	Listed int
	// Digest is Digest(Body) when fitting computed it already (a selected index.json, from
	// the cached chunk digests of its unchanged entries); zero otherwise.
	Digest [sha256.Size]byte
}

// FitKandev fits the entries of set into one Kandev document under p; the shards (from
// PlanShards) are named in its partial object when it is not full.
func FitKandev(p Policy, h Header, set *Set, shards *Shards) (Doc, error) {
	ids, cats := shards.URLs()
	if set.sel == nil {
		set.sel = &selection{}
	}
	return fitDoc(p, kandevHead(h), set.ByID(), set.sizes(), set.ByRank, set.Len(), ids, cats, set.sel)
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
func fitDoc(p Policy, head []byte, entries []*Encoded, z sizes, ranked func() []*Encoded, total int, shards, cats []string, sel *selection) (Doc, error) {
	limit := p.limit()
	if len(head)+len(`]}`)+z.full <= limit {
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
		return joinedDoc(head, entries, true, tail, ModeCompact), nil
	}
	part.Policy = ModeSelected
	if tail, err = partialTail(part); err != nil { // listed = total: the longest it can be
		return Doc{}, err
	}
	budget := limit - len(head) - len(tail)
	var chosen []*Encoded
	rk := ranked()
	for _, e := range rk {
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
	if sel != nil && sel.region != nil && slices.Equal(sel.ranked, chosen) { // the same entries as the last build: its bytes
		part.Listed = len(chosen)
		if tail, err = partialTail(part); err != nil {
			return Doc{}, err
		}
		return sel.doc(head, tail, len(chosen)), nil
	}
	byRank := chosen
	chosen = slices.Clone(chosen)
	slices.SortFunc(chosen, func(a, b *Encoded) int { return strings.Compare(a.ID, b.ID) })
	part.Listed = len(chosen)
	if tail, err = partialTail(part); err != nil {
		return Doc{}, err
	}
	if sel != nil {
		sel.set(byRank, chosen, len(head)+len(tail))
		return sel.doc(head, tail, len(chosen)), nil
	}
	return Doc{Body: assemble(head, chosen, true, tail), Mode: ModeSelected, Listed: len(chosen)}, nil
}

// selection remembers the entries a selected document chose (by rank), their joined
// compact bytes, and the chunk digests (Digest) of those bytes up to the last entry, so that
// the next build choosing the same entries copies them at once, and one choosing others
// hashes only the entries not chosen before. Its documents put "plugins" first (JSON
// objects are unordered; hosts decode them):
//
//	{"plugins":[…],"schema_version":1,"generated_at":…,"source":…,"serial":…,"partial":{…}}
type selection struct {
	ranked []*Encoded
	region []byte // `{"plugins":[` + the entries + `],`
	sums   []byte // chunk digests of region up to the last entry's segment (its "," included)
	last   int    // where the last entry's segment starts in region
	fresh  bool   // region's array has room the next document may fill in place
}

const pluginsFirst = `{"plugins":[`

func (sel *selection) set(byRank, byID []*Encoded, room int) {
	n := len(pluginsFirst) + 2
	for _, e := range byID {
		n += len(e.Compact) + 1
	}
	out := make([]byte, 0, n+room) // room: the first document's fields and tail, in place
	out = append(out, pluginsFirst...)
	for i, e := range byID {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, e.Compact...)
	}
	sel.sums, sel.last = entrySums(out, len(pluginsFirst), byID, true) // the last entry is hashed with what follows it, per document
	out = append(out, "],"...)
	sel.ranked, sel.region, sel.fresh = byRank, out, true
}

// segmentSums are the chunk digests of seg, which is "," + the entry's compact (or full)
// bytes: the same wherever the entry stands between two others (a chunk ends before every
// "," that follows an entry), so they are computed once per entry and form, and kept.
func (e *Encoded) segmentSums(seg []byte, compact bool) []byte {
	p := &e.fullSums
	if compact {
		p = &e.sums
	}
	if s := p.Load(); s != nil {
		return *s
	}
	s := appendChunkSums(nil, seg)
	p.Store(&s)
	return s
}

// entrySums are the chunk digests (Digest) of body, which joins entries after head bytes of
// its own, up to where its last entry's segment starts (last): the first entry with what
// precedes it, then each middle entry's kept segment digests, so that only the two ends of
// a document are hashed. When no chunk need end between entries (fewer than two, or entries
// that are not objects) sums is nil and last 0: the whole body is hashed.
func entrySums(body []byte, head int, entries []*Encoded, compact bool) (sums []byte, last int) {
	if len(entries) < 2 || !objectEntries(entries, compact) {
		return nil, 0
	}
	off := head + len(entries[0].bytes(compact))
	sums = appendChunkSums(make([]byte, 0, sha256.Size*(len(entries)+1)), body[:off])
	for _, e := range entries[1 : len(entries)-1] {
		seg := body[off : off+1+len(e.bytes(compact))]
		sums = append(sums, e.segmentSums(seg, compact)...)
		off += len(seg)
	}
	return sums, off
}

// joinedDoc is the document assemble makes, with its Digest computed from the entries'
// kept segment digests (entrySums): a change to one entry hashes that entry, not the whole
// document.
func joinedDoc(head []byte, entries []*Encoded, compact bool, tail []byte, mode string) Doc {
	body := assemble(head, entries, compact, tail)
	sums, last := entrySums(body, len(head), entries, compact)
	return Doc{Body: body, Mode: mode, Listed: len(entries), Digest: sha256.Sum256(appendChunkSums(sums, body[last:]))}
}

// objectEntries reports whether every entry is a JSON object ({…}): then a chunk of Digest
// ends between every two of them.
func objectEntries(entries []*Encoded, compact bool) bool {
	for _, e := range entries {
		b := e.bytes(compact)
		if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
			return false
		}
	}
	return true
}

// doc is the selected document: region, then head's fields without its opening brace and
// "plugins" key, then tail (the partial object, closing the document), with its digest.
func (sel *selection) doc(head, tail []byte, listed int) Doc {
	fields := head[1 : len(head)-len(`,"plugins":[`)]
	var body []byte
	if sel.fresh && cap(sel.region)-len(sel.region) >= len(fields)+len(tail) {
		// The region was just built for this document: its array takes the rest, and later
		// documents copy the region out of it (it is never written again).
		body = append(append(sel.region, fields...), tail...)
		sel.region = body[:len(sel.region):len(sel.region)]
	} else {
		body = make([]byte, 0, len(sel.region)+len(fields)+len(tail))
		body = append(append(append(body, sel.region...), fields...), tail...)
	}
	sel.fresh = false
	h := sha256.New()
	h.Write(sel.sums)
	h.Write(appendChunkSums(nil, body[sel.last:]))
	d := Doc{Body: body, Mode: ModeSelected, Listed: listed}
	h.Sum(d.Digest[:0])
	return d
}

// Digest is what a document's strong validator (ETag) is made of: the SHA-256 of the
// SHA-256 digests of body's chunks, a chunk ending at every "}" that ",{" follows (between
// two objects of an array: a document's entries). It is a function of the bytes alone, so a
// body read back is checked by it, and a document differing from the last in a few entries
// is digested by hashing only those entries' chunks (a selected index.json keeps the
// others'). Two bodies with one Digest have the same chunks, so the same bytes.
func Digest(body []byte) [sha256.Size]byte {
	return sha256.Sum256(appendChunkSums(nil, body))
}

// appendChunkSums appends the SHA-256 of each of b's chunks (Digest) to sums.
func appendChunkSums(sums, b []byte) []byte {
	start := 0
	for i := 1; i < len(b); {
		j := bytes.Index(b[i:], []byte(",{"))
		if j < 0 {
			break
		}
		i += j
		if b[i-1] == '}' {
			h := sha256.Sum256(b[start:i])
			sums, start = append(sums, h[:]...), i
		}
		i++
	}
	h := sha256.Sum256(b[start:])
	return append(sums, h[:]...)
}

// assemble joins a document: head, the entries' bytes separated by commas, then "]" and
// tail (which closes the object), or "]}" without one.
func assemble(head []byte, entries []*Encoded, compact bool, tail []byte) []byte {
	n := len(head) + 2 + len(tail)
	for _, e := range entries {
		n += len(e.bytes(compact)) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, head...)
	for i, e := range entries {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, e.bytes(compact)...)
	}
	out = append(out, ']')
	if tail == nil {
		return append(out, '}')
	}
	return append(out, tail...)
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

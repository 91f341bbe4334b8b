package index

import (
	"cmp"
	"crypto/sha256"
	"encoding"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
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
	Downloads  int64
	UpdatedAt  time.Time
	Full       []byte // every field
	Compact    []byte // the policy's compact form
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
	// SHA256 is the digest of Body when fitting computed it already (a selected index.json,
	// hashed from the state after its unchanged entries); zero otherwise.
	SHA256 [sha256.Size]byte
}

// FitKandev fits the entries of set into one Kandev document under p; the shards (from
// PlanShards) are named in its partial object when it is not full.
func FitKandev(p Policy, h Header, set *Set, shards *Shards) (Doc, error) {
	ids, cats := shards.URLs()
	if set.sel == nil {
		set.sel = &selection{}
	}
	return fitDoc(p, kandevHead(h), set.ByID(), set.ByRank, set.Len(), ids, cats, set.sel)
}

// FitCurupira fits the extensions of set into one Curupira document under p. Extensions
// have no shards: a partial Curupira document names none.
func FitCurupira(p Policy, h Header, set *Set) (Doc, error) {
	return fitDoc(p, curupiraHead(h), set.ByID(), set.ByRank, set.Len(), []string{}, nil, nil)
}

// fitDoc applies the policy to entries (sorted by id; ranked returns them by rank).
func fitDoc(p Policy, head []byte, entries []*Encoded, ranked func() []*Encoded, total int, shards, cats []string, sel *selection) (Doc, error) {
	limit := p.limit()
	size := len(head) + len(`]}`)
	for i, e := range entries {
		size += len(e.Full) + min(i, 1)
	}
	if size <= limit {
		return Doc{Body: assemble(head, entries, false, nil), Mode: ModeFull, Listed: len(entries)}, nil
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
	size = len(head) + len(tail)
	for i, e := range entries {
		size += len(e.Compact) + min(i, 1)
	}
	if size <= limit {
		return Doc{Body: assemble(head, entries, true, tail), Mode: ModeCompact, Listed: len(entries)}, nil
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
	if sel != nil && sel.state != nil && slices.Equal(sel.ranked, chosen) { // the same entries as the last build: its bytes
		part.Listed = len(chosen)
		if tail, err = partialTail(part); err != nil {
			return Doc{}, err
		}
		return sel.doc(head, tail, len(chosen))
	}
	byRank := chosen
	chosen = slices.Clone(chosen)
	slices.SortFunc(chosen, func(a, b *Encoded) int { return strings.Compare(a.ID, b.ID) })
	part.Listed = len(chosen)
	if tail, err = partialTail(part); err != nil {
		return Doc{}, err
	}
	if sel != nil {
		if err := sel.set(byRank, chosen, len(head)+len(tail)); err != nil {
			return Doc{}, err
		}
		return sel.doc(head, tail, len(chosen))
	}
	return Doc{Body: assemble(head, chosen, true, tail), Mode: ModeSelected, Listed: len(chosen)}, nil
}

// selection remembers the entries a selected document chose (by rank), their joined
// compact bytes, and the SHA-256 state after the bytes that come first, so that the next
// build choosing the same entries copies them at once and hashes only what follows them.
// Its documents put "plugins" first (JSON objects are unordered; hosts decode them):
//
//	{"plugins":[…],"schema_version":1,"generated_at":…,"source":…,"serial":…,"partial":{…}}
type selection struct {
	ranked []*Encoded
	region []byte // `{"plugins":[` + the entries + `],`
	state  []byte // sha256 state after region (encoding.BinaryMarshaler)
	fresh  bool   // region's array has room the next document may fill in place
}

const pluginsFirst = `{"plugins":[`

func (sel *selection) set(byRank, byID []*Encoded, room int) error {
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
	out = append(out, "],"...)
	h := sha256.New()
	h.Write(out)
	state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return fmt.Errorf("index: selection digest: %w", err)
	}
	sel.ranked, sel.region, sel.state, sel.fresh = byRank, out, state, true
	return nil
}

// doc is the selected document: region, then head's fields without its opening brace and
// "plugins" key, then tail (the partial object, closing the document), with its digest.
func (sel *selection) doc(head, tail []byte, listed int) (Doc, error) {
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
	if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(sel.state); err != nil {
		return Doc{}, fmt.Errorf("index: selection digest: %w", err)
	}
	h.Write(body[len(sel.region):])
	d := Doc{Body: body, Mode: ModeSelected, Listed: listed}
	h.Sum(d.SHA256[:0])
	return d, nil
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

// rankCompare orders entries for selection: official, then featured, then by order
// (downloads or recent), then by id.
func rankCompare(order string) func(a, b *Encoded) int {
	return func(a, b *Encoded) int {
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

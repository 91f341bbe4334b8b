package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/web"
)

// handleKandevIndex is GET and HEAD /index.json: the Kandev document, from memory.
func (s *Server) handleKandevIndex(c echo.Context) error {
	return s.serveDocument(c, func(d *ingest.Documents) *ingest.Document { return &d.Kandev })
}

// handleCurupiraIndex is GET and HEAD /curupira/index.json: the Curupira document, from memory.
func (s *Server) handleCurupiraIndex(c echo.Context) error {
	return s.serveDocument(c, func(d *ingest.Documents) *ingest.Document { return &d.Curupira })
}

// handleIndexShard is GET and HEAD /index/{name}: a shard of the Kandev document (a
// category, "tools.json", or an id prefix, "all.a.json"), an operator's further source when
// index.json is partial. Built on first request, then served like /index.json.
func (s *Server) handleIndexShard(c echo.Context) error {
	docs := s.svc.Documents()
	if docs == nil {
		return errf(http.StatusServiceUnavailable, "the index is being built; retry shortly")
	}
	name := c.Param("name")
	d, ok, err := docs.Shard(name)
	if err != nil {
		return err
	}
	if !ok {
		ids, cats := docs.ShardURLs()
		return errf(http.StatusNotFound, fmt.Sprintf("no index shard is named %q; the shards are %d id shards (%s…) and %d category shards, listed in index.json's partial object and on /docs",
			name, len(ids), firstOr(ids, "none"), len(cats)))
	}
	return s.serveDoc(c, d)
}

// sources are the source URLs an operator adds to Kandev: index.json, and when it is
// partial every shard; the home page and /docs show them (web.Sources).
func (s *Server) sources() web.SourceList {
	out := web.SourceList{IndexURL: s.cfg.PublicURL + "/index.json"}
	docs := s.svc.Documents()
	if !docs.Partial() {
		return out
	}
	out.Partial, out.Listed, out.Total = true, docs.Listed, docs.Total
	out.Shards, out.CategoryShards = docs.ShardURLs()
	out.ShardListURL = s.cfg.PublicURL + "/index/" + index.ShardListName
	return out
}

func firstOr(list []string, none string) string {
	if len(list) == 0 {
		return none
	}
	return list[0]
}

// serveDocument answers with a prebuilt document, with no database work, through
// http.ServeContent (conditional requests, ranges, HEAD).
func (s *Server) serveDocument(c echo.Context, pick func(*ingest.Documents) *ingest.Document) error {
	docs := s.svc.Documents()
	if docs == nil {
		return errf(http.StatusServiceUnavailable, "the index is being built; retry shortly")
	}
	return s.serveDoc(c, pick(docs))
}

// serveDoc serves d from memory (serveBytes). The gzip bytes go to clients that prefer
// them, under their own ETag: they are another representation, and a range of one must
// never be completed with bytes of the other. A document is compressed once, on its first
// gzip request (concurrent requests wait for that one compression).
func (s *Server) serveDoc(c echo.Context, d *ingest.Document) error {
	h := c.Response().Header()
	setHeader(h, echo.HeaderContentType, jsonType)
	setHeader(h, "Cache-Control", docCache)
	setHeader(h, echo.HeaderAccessControlAllowOrigin, anyOrigin)
	addVary(h)
	gzip := acceptsGzip(c.Request().Header)
	body := d.Body
	if gzip {
		body = index.BodyOf(d.Gzip())
		setHeader(h, echo.HeaderContentEncoding, gzipCoding)
	}
	m := s.docHeaders.of(d, gzip, body)
	setHeader(h, "Etag", m.etag)
	serveBytes(c, m, d.LastModified, body, gzip)
	return nil
}

// serveBytes answers with body, a representation of a document (encoded: its gzip bytes)
// from memory. A GET or HEAD with no precondition and no range, what hosts and mirrors
// send, gets its 200 written here with the header values made once per document (m): the
// fields and values http.ServeContent sets for it (Last-Modified, Accept-Ranges,
// Content-Length; TestServeBytesMatchesServeContent), without formatting the time, the
// length and a slice for each on every request. Any other request goes through
// http.ServeContent. The caller has set Content-Type (ServeContent would sniff one).
func serveBytes(c echo.Context, m *docHeaderValues, modtime time.Time, body index.Body, encoded bool) {
	if !plainRequest(c.Request().Header) {
		encodedLen := int64(0)
		if encoded {
			encodedLen = int64(body.Len())
		}
		w := &contentWriter{res: c.Response(), req: c.Request(), encodedLen: encodedLen, body: body}
		w.serve(modtime, body.Reader())
		return
	}
	res := c.Response()
	h := res.Header()
	if m.lastModified != nil {
		setHeader(h, "Last-Modified", m.lastModified)
	}
	setHeader(h, "Accept-Ranges", acceptRanges)
	setHeader(h, echo.HeaderContentLength, m.length)
	res.WriteHeader(http.StatusOK)
	if c.Request().Method != http.MethodHead {
		n, _ := writeWhole(c.Request(), res.Writer, body) // head and body in one writev (heldconn.go)
		res.Size += n
	}
}

// plainRequest reports whether h has none of the fields that make http.ServeContent
// answer anything but the whole representation: the preconditions of RFC 9110 §13 and
// Range (If-Range only matters with a Range). A field that is present but empty counts as
// absent, as ServeContent reads them with Header.Get.
func plainRequest(h http.Header) bool {
	for _, k := range [...]string{"If-Match", "If-Unmodified-Since", "If-None-Match", "If-Modified-Since", "Range"} {
		if v := h[k]; len(v) > 0 && v[0] != "" {
			return false
		}
	}
	return true
}

// The header values every document response carries (setHeader).
var (
	jsonType     = headerValue("application/json")
	docCache     = headerValue("public, max-age=60")
	anyOrigin    = headerValue("*")
	gzipCoding   = headerValue("gzip")
	acceptRanges = headerValue("bytes")
	varyEncoding = headerValue(echo.HeaderAcceptEncoding)
)

// addVary is h.Add("Vary", "Accept-Encoding"), without a slice per response when the field
// is not set yet.
func addVary(h http.Header) {
	if v := h[echo.HeaderVary]; len(v) > 0 {
		h[echo.HeaderVary] = append(v, echo.HeaderAcceptEncoding)
		return
	}
	setHeader(h, echo.HeaderVary, varyEncoding)
}

// gzipETag is the strong ETag of a document's gzip representation.
func gzipETag(etag string) string {
	return strings.TrimSuffix(etag, `"`) + `-gzip"`
}

// serveContent is http.ServeContent through echo's response (so that logs and metrics see
// the status and size), keeping the connection's ReadFrom within reach: a file (a package
// download from the blob folder) is then sent with sendfile(2). encodedLen is the length
// of a body the caller has already Content-Encoded (0 if none): ServeContent leaves
// Content-Length out then, as if the encoding happened on the fly, and the body would go
// out chunked. A Range of more than maxRanges ranges is ignored (dropExcessRanges): from a
// body in memory too, thousands of one-byte parts cost ServeContent's multipart writer
// thousands of times the CPU of the whole body (BenchmarkServeBytesRanges).
func serveContent(c echo.Context, modtime time.Time, content io.ReadSeeker, encodedLen int64) {
	w := &contentWriter{res: c.Response(), req: c.Request(), encodedLen: encodedLen}
	w.serve(modtime, content)
}

type contentWriter struct {
	res        *echo.Response
	req        *http.Request
	encodedLen int64
	body       index.Body // what content reads when it is a document's (serveBytes), else empty
}

func (w *contentWriter) serve(modtime time.Time, content io.ReadSeeker) {
	dropExcessRanges(w.req)
	http.ServeContent(w, w.req, "", modtime, content)
}

func (w *contentWriter) Header() http.Header { return w.res.Header() }

func (w *contentWriter) Write(b []byte) (int, error) { return w.res.Write(b) }

func (w *contentWriter) WriteHeader(code int) {
	h := w.res.Header()
	if code == http.StatusOK && w.encodedLen > 0 && h.Get(echo.HeaderContentLength) == "" {
		h.Set(echo.HeaderContentLength, strconv.FormatInt(w.encodedLen, 10))
	}
	w.res.WriteHeader(code)
}

// ReadFrom hands the body to the underlying writer's ReadFrom (net/http's uses sendfile for
// an *os.File), counting the bytes as echo's Write would. The rest of a body in memory
// (http.ServeContent's io.LimitedReader, not cut short) goes out without net/http's copy
// through a fresh 32 KiB buffer, a write syscall per chunk: a *bytes.Reader's in one Write,
// a document's parts with the response head in one writev (writeWhole), as a plain GET's.
func (w *contentWriter) ReadFrom(r io.Reader) (int64, error) {
	if !w.res.Committed {
		w.WriteHeader(http.StatusOK)
	}
	rf, hasRF := w.res.Writer.(io.ReaderFrom)
	if lr, ok := r.(*io.LimitedReader); ok {
		switch src := lr.R.(type) {
		case *bytes.Reader:
			if int64(src.Len()) <= lr.N {
				n, err := src.WriteTo(w.res)
				lr.N -= n
				return n, err
			}
		case *index.BodyReader:
			if b, ok := w.restOf(src, lr.N); hasRF && ok {
				n, err := readFromHeld(w.req, rf, b)
				lr.N -= n
				w.res.Size += n
				return n, err
			}
		}
	}
	if !hasRF {
		return io.Copy(w.res, r)
	}
	n, err := rf.ReadFrom(r)
	w.res.Size += n
	return n, err
}

// restOf is what is left of w.body to read from src, a reader over it, when lr.N, the bytes
// asked for, are all of them.
func (w *contentWriter) restOf(src *index.BodyReader, n int64) (*heldBody, bool) {
	off, err := src.Seek(0, io.SeekCurrent)
	if w.body.Len() == 0 || err != nil || int64(w.body.Len())-off > n {
		return nil, false
	}
	b := &heldBody{parts: w.body.Parts()}
	b.skip(off)
	return b, true
}

// acceptsGzip reports whether the client prefers the gzip bytes, from every Accept-Encoding
// field with its q-values (RFC 9110 §12.5.3). gzip's weight is that of "gzip" or "x-gzip",
// else of "*", else 0 (not acceptable). identity is always acceptable unless refused, but
// ranks below any coding the client names, unless "identity" or "*" gives it a weight. Ties
// go to gzip, the smaller. No header at all means identity: clients that want gzip say so.
// Every element is weighed (the decisive one may come last), without allocating: the
// server's 64 KiB header limit holds about 4,000 of them, which cost a document request
// 1.6 ms when each coding name was lower-cased into a copy (BenchmarkAcceptsGzipHostile).
func acceptsGzip(h http.Header) bool {
	gz, id, star := -1.0, -1.0, -1.0
	for _, field := range h.Values(echo.HeaderAcceptEncoding) {
		for part := range strings.SplitSeq(field, ",") {
			name, q, ok := parseCoding(part)
			if !ok {
				continue
			}
			switch {
			case strings.EqualFold(name, "gzip"), strings.EqualFold(name, "x-gzip"):
				gz = max(gz, q)
			case strings.EqualFold(name, "identity"):
				id = max(id, q)
			case name == "*":
				star = max(star, q)
			}
		}
	}
	if gz < 0 {
		gz = max(star, 0)
	}
	if id < 0 {
		id = max(star, 0)
	}
	return gz > 0 && gz >= id
}

// parseCoding parses one element of Accept-Encoding: a coding name (as sent: compare it
// case-insensitively) and its weight (1 when absent); ok is false for an empty element or a
// malformed q-value, which is then ignored rather than guessed at.
func parseCoding(part string) (name string, q float64, ok bool) {
	name, params, _ := strings.Cut(part, ";")
	name = strings.TrimSpace(name)
	if name == "" {
		return "", 0, false
	}
	q = 1
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(p, "=")
		if !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		if q, ok = parseQValue(strings.TrimSpace(v)); !ok {
			return "", 0, false
		}
	}
	return name, q, true
}

// parseQValue parses a weight: "0" to "1" with at most three decimals (RFC 9110 §12.4.2).
func parseQValue(s string) (float64, bool) {
	whole, frac, _ := strings.Cut(s, ".")
	if (whole != "0" && whole != "1") || len(frac) > 3 {
		return 0, false
	}
	if strings.Trim(frac, "0123456789") != "" || (whole == "1" && strings.Trim(frac, "0") != "") {
		return 0, false
	}
	q, err := strconv.ParseFloat(s, 64)
	return q, err == nil
}

// docHeaderValues are the header values of one representation of a document, each a
// headerValue (setHeader), made on its first request.
type docHeaderValues struct {
	etag         []string
	lastModified []string // nil when the document has no modification time
	length       []string
}

// docHeaderCache holds the docHeaderValues of the documents being served, by document
// (its ETag, which names its bytes, and its modification time) and representation; past
// docHeaderCacheMax documents (each build makes new ones) the cache starts again empty.
// The key is never the *ingest.Document: that kept up to docHeaderCacheMax documents
// alive after they were replaced, 256 × 5 MiB of index.json under a stream of publishes
// (bench/scale's readers phase at 10k plugins: 1.2 GB live heap, 2.4 GB peak RSS).
type docHeaderCache struct {
	identity, gzip sync.Map // docHeaderKey -> *docHeaderValues
	n              atomic.Int64
}

// docHeaderKey identifies a document without referring to it.
type docHeaderKey struct {
	etag     string
	modified int64 // LastModified, Unix nanoseconds
}

const docHeaderCacheMax = 256

// of returns the values of d's representation body (gzip: the gzip bytes).
func (dc *docHeaderCache) of(d *ingest.Document, gzip bool, body index.Body) *docHeaderValues {
	m := &dc.identity
	if gzip {
		m = &dc.gzip
	}
	key := docHeaderKey{etag: d.ETag, modified: d.LastModified.UnixNano()}
	if v, ok := m.Load(key); ok {
		return v.(*docHeaderValues)
	}
	if dc.n.Add(1) > docHeaderCacheMax {
		dc.identity.Clear()
		dc.gzip.Clear()
		dc.n.Store(1)
	}
	etag := d.ETag
	if gzip {
		etag = gzipETag(etag)
	}
	v := &docHeaderValues{etag: headerValue(etag), length: headerValue(strconv.Itoa(body.Len()))}
	if t := d.LastModified; !t.IsZero() && !t.Equal(time.Unix(0, 0)) {
		v.lastModified = headerValue(t.UTC().Format(http.TimeFormat))
	}
	actual, _ := m.LoadOrStore(key, v)
	return actual.(*docHeaderValues)
}

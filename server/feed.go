package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
)

// Incremental sync for tools (docs/sync-for-tools.md): the listing, the per-package
// documents and the change feed.

// feedLimit bounds ?limit= of GET /api/v1/changes.
const (
	feedDefaultLimit = 100
	feedMaxLimit     = ingest.FeedPageSize
	// gzipMin is the body size from which a JSON answer is gzipped for a client that asks:
	// below it the header costs more than it saves.
	gzipMin = 1024
)

// handlePackageIndex is GET and HEAD /api/v1/index/{file id}.json: one listed package's
// releases (immutable lines) and state (yanks, deprecation), under a strong ETag.
func (s *Server) handlePackageIndex(c echo.Context) error {
	fileID, ok := strings.CutSuffix(c.Param("file"), ".json")
	if !ok || fileID == "" {
		return errf(http.StatusNotFound, "no package document "+truncateForMessage(c.Param("file"))+": documents are /api/v1/index/<id>.json")
	}
	pi, err := s.svc.PackageIndexByFile(c.Request().Context(), fileID)
	if errors.Is(err, ingest.ErrNotFound) {
		return errf(http.StatusNotFound, fmt.Sprintf("no listed package %q with a release; GET /api/v1/index.json lists them", truncateForMessage(fileID)))
	}
	if err != nil {
		return err
	}
	return serveJSONBytes(c, pi.Body, pi.ETag)
}

// handleListing is GET and HEAD /api/v1/index.json: every listed package with a release and
// the URL of its document, with the serial read before them.
func (s *Server) handleListing(c echo.Context) error {
	doc, err := s.svc.ListingDocument(c.Request().Context())
	if err != nil {
		return err
	}
	return serveJSONBytes(c, doc.Body, doc.ETag)
}

// handleChanges is GET and HEAD /api/v1/changes?since=SERIAL&limit=N: the changes after
// since in serial order, at most limit (default 100, at most 1000), with the URL of the
// next page while more follow. A since below complete_since is 410: those changes are not
// known, the client fetches everything (GET /api/v1/index.json) and continues from its
// serial.
func (s *Server) handleChanges(c echo.Context) error {
	since, err := queryInt(c, "since", 0, 0, 1<<62, "the serial the client is at (0 for everything)")
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit", feedDefaultLimit, 1, feedMaxLimit, "the most changes one page holds")
	if err != nil {
		return err
	}
	page, more, err := s.svc.Feed(c.Request().Context(), since, int(limit))
	if errors.Is(err, ingest.ErrFeedIncomplete) {
		return c.JSON(http.StatusGone, feedGone{
			Error: fmt.Sprintf("since=%d is before serial %d, from which the feed holds every change: fetch every package document (GET /api/v1/index.json lists them), then continue from its serial",
				since, page.CompleteSince),
			Serial: page.Serial, CompleteSince: page.CompleteSince})
	}
	if err != nil {
		return err
	}
	if since > page.Serial {
		return errf(http.StatusBadRequest, fmt.Sprintf("since=%d is after the current serial %d: a serial from another registry or an older database; fetch everything (GET /api/v1/index.json) and continue from its serial", since, page.Serial))
	}
	if more {
		u := fmt.Sprintf("%s/api/v1/changes?since=%d&limit=%d", s.cfg.PublicURL, page.Changes[len(page.Changes)-1].Serial, limit)
		page.Next = &u
	}
	return s.serveJSONValue(c, page)
}

// handleStaticChanges is GET and HEAD /api/v1/changes/{since}.json: the page an export
// writes at that path (since a multiple of 1000), so that one tool reads both.
func (s *Server) handleStaticChanges(c echo.Context) error {
	raw, ok := strings.CutSuffix(c.Param("page"), ".json")
	since, err := strconv.ParseInt(raw, 10, 64)
	if !ok || err != nil {
		return errf(http.StatusNotFound, "no feed page "+truncateForMessage(c.Param("page"))+": pages are /api/v1/changes/<since>.json, since a multiple of 1000")
	}
	page, err := s.svc.StaticFeed(c.Request().Context(), since)
	if errors.Is(err, ingest.ErrNotFound) {
		return errf(http.StatusNotFound, fmt.Sprintf("no feed page %d: pages start at multiples of %d, from the one holding complete_since to the one holding the current serial (GET /api/v1/index.json)", since, ingest.FeedPageSize))
	}
	if err != nil {
		return err
	}
	return s.serveJSONValue(c, page)
}

// feedGone is the 410 answer of a feed read from before complete_since.
type feedGone struct {
	Error         string `json:"error"`
	Serial        int64  `json:"serial"`
	CompleteSince int64  `json:"complete_since"`
}

// queryInt reads a whole-number query parameter within [lo, hi], def when absent; the
// refusal names the parameter, its limits and what it means.
func queryInt(c echo.Context, name string, def, lo, hi int64, meaning string) (int64, error) {
	v := c.QueryParam(name)
	if v == "" && !c.QueryParams().Has(name) {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, errf(http.StatusBadRequest, fmt.Sprintf("%s=%q is not a whole number from %d to %d (%s)", name, truncateForMessage(v), lo, hi, meaning))
	}
	return n, nil
}

// serveJSONValue marshals v and serves it with serveJSONBytes under the ETag of its bytes.
func (s *Server) serveJSONValue(c echo.Context, v any) error {
	body, err := ingest.FeedJSON(v)
	if err != nil {
		return err
	}
	return serveJSONBytes(c, body, bodyETag(body))
}

// serveJSONBytes answers with body under its strong ETag through http.ServeContent
// (If-None-Match → 304, HEAD, ranges), gzipped for a client that prefers it when the body
// is large enough, under the gzip representation's own ETag. Caches in between must
// revalidate (no-cache): a mirror that read a change in the feed and then got a document
// a minute old from a cache would step past the change for good.
func serveJSONBytes(c echo.Context, body []byte, etag string) error {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "application/json")
	h.Set("Cache-Control", "no-cache")
	h.Set(echo.HeaderAccessControlAllowOrigin, "*")
	h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
	if len(body) >= gzipMin && acceptsGzip(c.Request().Header) {
		gz, err := gzipFast(body)
		if err != nil {
			return err
		}
		h.Set(echo.HeaderContentEncoding, "gzip")
		h.Set("ETag", gzipETag(etag))
		serveContent(c, time.Time{}, bytes.NewReader(gz), int64(len(gz)))
		return nil
	}
	h.Set("ETag", etag)
	serveContent(c, time.Time{}, bytes.NewReader(body), 0)
	return nil
}

// gzipFast compresses at the fastest level: the answers are built per request.
func gzipFast(body []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(body); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// bodyETag is the strong ETag of body's bytes (as the index documents': 128 bits of sha256).
func bodyETag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

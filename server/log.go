package server

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/translog"
	"github.com/pluginyard/registry/web"
)

// logLookup is the JSON of GET /log/lookup/{id}@{version}.
type logLookup struct {
	Index      int64            `json:"index"`
	Record     translog.Record  `json:"record"`
	Leaf       string           `json:"leaf"`      // the exact leaf bytes (translog.RecordText)
	TreeSize   int64            `json:"tree_size"` // the checkpoint's tree size
	RootHash   tlog.Hash        `json:"root_hash"` // base64, as in the checkpoint
	Proof      tlog.RecordProof `json:"proof"`     // base64 hashes, for tlog.CheckRecord
	Checkpoint string           `json:"checkpoint"`
}

// logRef is how the API and pages point at a release's publish record.
type logRef struct {
	Index     int64  `json:"index"`
	LookupURL string `json:"lookup_url"`
}

// transparencyLog returns the log, or a 503 when none could be opened.
func (s *Server) transparencyLog() (*translog.Log, error) {
	if s.tlog == nil {
		return nil, errf(http.StatusServiceUnavailable, "the transparency log is not available (its key could not be loaded; see the server log)")
	}
	return s.tlog, nil
}

// handleLogCheckpoint is GET /log/checkpoint: the latest signed checkpoint (signed note).
func (s *Server) handleLogCheckpoint(c echo.Context) error {
	lg, err := s.transparencyLog()
	if err != nil {
		return err
	}
	cp, err := lg.Checkpoint(c.Request().Context())
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "public, max-age=10")
	h.Set(echo.HeaderAccessControlAllowOrigin, "*")
	return c.Blob(http.StatusOK, "text/plain; charset=utf-8", cp.Note)
}

// handleLogKey is GET /log/key: the verifier key checkpoints are signed with.
func (s *Server) handleLogKey(c echo.Context) error {
	lg, err := s.transparencyLog()
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.String(http.StatusOK, lg.Key().VerifierKey+"\n")
}

// handleLogTile is GET /log/tile/{H}/{L}/{K}[.p/{W}]: a hash or data tile, as the Go
// checksum database serves them. A full tile never changes and is cached for a year; a
// partial one is replaced by a wider one as the tree grows.
func (s *Server) handleLogTile(c echo.Context) error {
	lg, err := s.transparencyLog()
	if err != nil {
		return err
	}
	t, err := tlog.ParseTilePath("tile/" + c.Param("*"))
	if err != nil {
		return errf(http.StatusNotFound, "not a tile path: want /log/tile/{H}/{L}/{K}[.p/{W}] with H = "+strconv.Itoa(translog.TileHeight))
	}
	data, err := lg.Tile(c.Request().Context(), t)
	if errors.Is(err, translog.ErrTileRange) {
		return errf(http.StatusNotFound, err.Error())
	}
	if err != nil {
		return err
	}
	cache := "public, max-age=10"
	if t.W == 1<<t.H {
		cache = "public, max-age=31536000, immutable"
	}
	h := c.Response().Header()
	h.Set("Cache-Control", cache)
	h.Set(echo.HeaderAccessControlAllowOrigin, "*")
	return c.Blob(http.StatusOK, "application/octet-stream", data)
}

// handleLogLookup is GET /log/lookup/{id}@{version}: the release's publish record, its
// index, and an inclusion proof against the latest checkpoint. Ids may hold '@' and '/'
// (Curupira's @scope/name), so the version is what follows the last '@'.
func (s *Server) handleLogLookup(c echo.Context) error {
	lg, err := s.transparencyLog()
	if err != nil {
		return err
	}
	ref := pathParam(c, "*")
	i := strings.LastIndexByte(ref, '@')
	if i <= 0 || i == len(ref)-1 {
		return errf(http.StatusBadRequest, "want /log/lookup/{id}@{version}, such as /log/lookup/acme-hello@1.2.0; got "+strconv.Quote(ref))
	}
	l, err := lg.Lookup(c.Request().Context(), ref[:i], ref[i+1:])
	if errors.Is(err, store.ErrNotFound) {
		return errf(http.StatusNotFound, ref+" has no publish record in the log")
	}
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=10")
	c.Response().Header().Set(echo.HeaderAccessControlAllowOrigin, "*")
	return c.JSON(http.StatusOK, logLookup{Index: l.Index, Record: l.Record, Leaf: string(l.Text), TreeSize: l.Checkpoint.Size,
		RootHash: l.Checkpoint.Hash, Proof: l.Proof, Checkpoint: string(l.Checkpoint.Note)})
}

// logRefs returns the publish record of each version of package id, by version; nil when
// there is no log.
func (s *Server) logRefs(c echo.Context, id string) (map[string]logRef, error) {
	if s.tlog == nil {
		return nil, nil
	}
	idx, err := s.md.LogIndexes(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	out := make(map[string]logRef, len(idx))
	for v, n := range idx {
		out[v] = logRef{Index: n, LookupURL: s.cfg.PublicURL + "/log/lookup/" + lookupRef(id, v)}
	}
	return out, nil
}

// openLog is cfg.Log, or when nil the log of the service's store signed with the key in
// its data directory (generated there on first use), as `registry serve` would open it.
func (s *Server) openLog() {
	if s.cfg.Log != nil {
		s.tlog = s.cfg.Log
		return
	}
	tl, err := s.svc.OpenLog(translog.KeyName(s.cfg.PublicURL))
	if err != nil {
		s.log.Error("transparency log unavailable", "err", err)
		return
	}
	s.tlog = tl
}

func logRefOf(refs map[string]logRef, version string) *logRef {
	if r, ok := refs[version]; ok {
		return &r
	}
	return nil
}

// logEntryOf is the page's pointer at id@version's publish record (a relative link); nil
// when the log has none.
func (s *Server) logEntryOf(c echo.Context, id, version string) (*web.LogEntry, error) {
	refs, err := s.logRefs(c, id)
	if err != nil {
		return nil, err
	}
	r, ok := refs[version]
	if !ok {
		return nil, nil
	}
	return &web.LogEntry{Index: r.Index, URL: "/log/lookup/" + id + "@" + version}, nil
}

// lookupRef is "id@version" for a lookup URL, each part path-escaped but for the "@" and
// "/" of a scoped extension name, so a legacy version ("1.0.0?x#y") still looks itself up.
func lookupRef(id, version string) string {
	scope, name, scoped := strings.Cut(strings.TrimPrefix(id, "@"), "/")
	ref := url.PathEscape(id)
	if strings.HasPrefix(id, "@") && scoped {
		ref = "@" + url.PathEscape(scope) + "/" + url.PathEscape(name)
	}
	return ref + "@" + url.PathEscape(version)
}

package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/web"
)

// hostOfPath reads the host of a /kandev/{host_version}/{platform}/… path: a malformed
// version is a 400, an unknown platform a 404 (no such document), each naming its rule.
func hostOfPath(c echo.Context) (ingest.Host, error) {
	h, err := ingest.ParseHost(c.Param("kandev"), c.Param("platform"))
	var rf *ingest.Refusal
	if errors.As(err, &rf) && len(rf.Problems) > 0 && rf.Problems[0].Rule == "host.platform" {
		return h, &ingest.Refusal{Kind: ingest.ErrNotFound, Message: rf.Message, Problems: rf.Problems}
	}
	return h, err
}

// hostOfQuery reads the host of ?kandev=&platform=; either malformed is a 400.
func hostOfQuery(c echo.Context) (ingest.Host, error) {
	return ingest.ParseHost(c.QueryParam("kandev"), c.QueryParam("platform"))
}

// handleHostIndex is GET and HEAD /kandev/{host_version}/{platform}/index.json: the
// host-aware Kandev document (the newest release each listed plugin has that this host can
// install), served like /index.json.
func (s *Server) handleHostIndex(c echo.Context) error {
	d, err := s.hostDoc(c)
	if err != nil {
		return err
	}
	return s.serveDocument(c, func(*ingest.Documents) *ingest.Document { return &d.Kandev })
}

// handleHostShard is GET and HEAD /kandev/{host_version}/{platform}/index/{shard}: a shard
// the host-aware document names when it is partial.
func (s *Server) handleHostShard(c echo.Context) error {
	d, err := s.hostDoc(c)
	if err != nil {
		return err
	}
	name := c.Param("shard")
	if !d.ShardBuilt(name) {
		if err := s.chargeHostBuild(c); err != nil {
			return err
		}
	}
	sh, ok, err := d.Shard(name)
	if err != nil {
		return err
	}
	if !ok {
		return errf(http.StatusNotFound, "no such shard of this host-aware index; its partial object names the shards")
	}
	return s.serveDocument(c, func(*ingest.Documents) *ingest.Document { return sh })
}

// hostDoc is the host-aware document of the path's host. A client that takes gzip (every
// Kandev host) is served a class kept compressed as it is; a class not built yet is
// charged to the client's host-build budget first.
func (s *Server) hostDoc(c echo.Context) (*ingest.HostDoc, error) {
	h, err := hostOfPath(c)
	if err != nil {
		return nil, err
	}
	if s.svc.Documents() != nil && !s.svc.HostCached(h) {
		if err := s.chargeHostBuild(c); err != nil {
			return nil, err
		}
	}
	get := s.svc.HostIndex
	if acceptsGzip(c.Request().Header) {
		get = s.svc.HostIndexGzip
	}
	d, err := get(c.Request().Context(), h)
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, errf(http.StatusServiceUnavailable, "the index is being built; retry shortly")
	}
	return d, nil
}

// chargeHostBuild spends one of the client's host-aware builds (RateLimits.HostBuild):
// once they are spent, 429 with Retry-After, while built classes go on answering.
func (s *Server) chargeHostBuild(c echo.Context) error {
	l := s.limits.hostBuild
	if l == nil {
		return nil
	}
	if d := l.take(s.now(), s.limits.clientIP(c)); d > 0 {
		return s.tooMany(c, classHostBuild, d, "too many host-aware documents built for this client (a host version of a class not built yet costs a build; built ones answer at once)")
	}
	return nil
}

// handleCompatibility is GET /api/v1/plugins/{id}/compatibility?kandev=X&platform=Y: per
// release, whether that host can install it and why not (reason codes and text).
func (s *Server) handleCompatibility(c echo.Context) error {
	h, err := hostOfQuery(c)
	if err != nil {
		return err
	}
	rep, err := s.svc.Compatibility(c.Request().Context(), pathParam(c, "id"), h)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rep)
}

// handleUpgrade is GET /api/v1/plugins/{id}/upgrade?from=V&kandev=X&platform=Y: the newest
// release newer than V that host can install, or "none" with why, and the release notes
// in between.
func (s *Server) handleUpgrade(c echo.Context) error {
	h, err := hostOfQuery(c)
	if err != nil {
		return err
	}
	rep, err := s.svc.Upgrade(c.Request().Context(), pathParam(c, "id"), c.QueryParam("from"), h)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rep)
}

type compatBody struct {
	MaxKandev string `json:"max_kandev"`
	Reason    string `json:"reason"`
}

// handleCompatSet is POST /api/v1/admin/compat/{id}/versions/{version}
// {"max_kandev","reason"} (admin): narrow the release to hosts up to max_kandev.
func (s *Server) handleCompatSet(c echo.Context) error {
	var b compatBody
	if err := decodeJSONBody(c, &b, `{"max_kandev": "0.93.4", "reason": "..."}`); err != nil {
		return err
	}
	cur, err := s.svc.SetCompat(c.Request().Context(), actorOf(c), pathParam(c, "id"), pathParam(c, "version"), b.MaxKandev, b.Reason)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cur)
}

// handleCompatClear is POST /api/v1/admin/compat/{id}/versions/{version}/clear (admin):
// remove the curation; the manifest's range applies again.
func (s *Server) handleCompatClear(c echo.Context) error {
	had, err := s.svc.ClearCompat(c.Request().Context(), actorOf(c), pathParam(c, "id"), pathParam(c, "version"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"id": pathParam(c, "id"), "version": pathParam(c, "version"), "cleared": had})
}

// decodeJSONBody reads a small JSON object body (at most 64 KiB, no unknown fields); a
// refusal shows example.
func decodeJSONBody(c echo.Context, v any, example string) error {
	return bindJSON(c, 64<<10, v, true, example)
}

// markCurated shows on the versions table of a plugin page the releases an admin narrowed
// to older hosts (one query: the package's curations).
func (s *Server) markCurated(c echo.Context, id string, rows []web.VersionRow) error {
	curs, err := s.md.Curations(c.Request().Context(), id)
	if err != nil || len(curs) == 0 {
		return err
	}
	for i := range rows {
		if cur, ok := curs[rows[i].Version]; ok {
			rows[i].CuratedMax, rows[i].CuratedReason = cur.MaxKandev, cur.Reason
		}
	}
	return nil
}

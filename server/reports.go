package server

import (
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/web"
)

// reportBody is what a report request carries, as JSON or as the page's form fields.
type reportBody struct {
	Kind    string `json:"kind"`
	Version string `json:"version"`
	Reason  string `json:"reason"`
}

// filedReport is the public answer to a filed report: no reporter hash, no reason.
type filedReport struct {
	ID        int64  `json:"id"`
	PackageID string `json:"package_id"`
	Version   string `json:"version,omitempty"`
	Kind      string `json:"kind"`
	CreatedAt string `json:"created_at"`
	State     string `json:"state"`
}

// checkSameOrigin refuses (403 report.origin) a request a browser sent from another
// site's page. There is no session for a per-form token to be bound to: a token anyone may
// fetch is one an attacking page's server may fetch and embed too, so it would stop
// nothing. What a cross-site forgery must not do is make visitors' browsers file reports
// from their addresses, and browsers say where a request comes from: Sec-Fetch-Site, or
// Origin where that is missing. net/http.CrossOriginProtection checks exactly these (a
// request with neither is not from a browser, and is as welcome as any API call); the
// public URL is trusted beside the Host header for a registry behind a proxy.
func (s *Server) checkSameOrigin(c echo.Context) error {
	p := http.NewCrossOriginProtection()
	if u, err := url.Parse(s.cfg.PublicURL); err == nil && u.Scheme != "" && u.Host != "" {
		_ = p.AddTrustedOrigin(u.Scheme + "://" + u.Host) // well-formed by construction
	}
	if p.Check(c.Request()) != nil {
		return ingest.RefuseReportOrigin()
	}
	return nil
}

// reportInput reads the body of a report request: the form's fields, or a JSON object;
// either is at most ingest.MaxReportBody bytes (413 report.body.size).
func (s *Server) reportInput(c echo.Context, id string, asJSON bool) (ingest.ReportInput, error) {
	req := c.Request()
	req.Body = http.MaxBytesReader(c.Response(), req.Body, ingest.MaxReportBody)
	decode := decodeReportForm
	if asJSON {
		decode = decodeReportJSON
	}
	b, err := decode(req)
	if err != nil {
		return ingest.ReportInput{}, err
	}
	return ingest.ReportInput{PackageID: id, Version: b.Version, Kind: b.Kind, Reason: b.Reason,
		Reporter: s.limits.clientIP(c)}, nil
}

// decodeReportForm reads the page's form (application/x-www-form-urlencoded).
func decodeReportForm(req *http.Request) (reportBody, error) {
	err := req.ParseForm()
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return reportBody{}, ingest.RefuseReportBody()
	case err != nil:
		return reportBody{}, errf(http.StatusBadRequest, "the report form could not be read: send it from the package's page")
	}
	f := req.PostForm
	return reportBody{Kind: f.Get("kind"), Version: f.Get("version"), Reason: f.Get("reason")}, nil
}

// decodeReportJSON reads an application/json body (400 report.body.json otherwise).
func decodeReportJSON(req *http.Request) (reportBody, error) {
	ct := req.Header.Get(echo.HeaderContentType)
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != echo.MIMEApplicationJSON {
		return reportBody{}, ingest.RefuseReportJSON(errors.New("Content-Type is " + strconv.Quote(ct)))
	}
	var b reportBody
	err := readJSONObject(req.Body, &b, false)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return reportBody{}, ingest.RefuseReportBody()
	case err != nil:
		return reportBody{}, ingest.RefuseReportJSON(err)
	}
	return b, nil
}

// handleReportAPI is POST /api/v1/plugins/{id}/reports {"kind","reason","version"?}:
// anyone may report a package (an extension @scope/name by its escaped id,
// %40scope%2Fname); 201 with the report's id and state.
func (s *Server) handleReportAPI(c echo.Context) error {
	if err := s.checkSameOrigin(c); err != nil {
		return err
	}
	in, err := s.reportInput(c, pathParam(c, "id"), true)
	if err != nil {
		return err
	}
	r, err := s.svc.SubmitReport(c.Request().Context(), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, filedReport{ID: r.ID, PackageID: r.PackageID, Version: r.Version, Kind: r.Kind,
		CreatedAt: r.CreatedAt.Format("2006-01-02T15:04:05Z07:00"), State: "open"})
}

// handleReportForm is POST /plugins/{id}/report: a plugin's or canvas's page's form.
func (s *Server) handleReportForm(c echo.Context) error {
	return s.reportForm(c, pathParam(c, "id"), false)
}

// handleExtensionReportForm is POST /extensions/{name}/report: an extension's page's form
// (the name may hold a slash, escaped or not, as on GET /extensions/{name}).
func (s *Server) handleExtensionReportForm(c echo.Context) error {
	name, ok := strings.CutSuffix(c.Param("*"), "/report")
	if !ok {
		return errf(http.StatusNotFound, "page not found: an extension's report form posts to /extensions/{name}/report")
	}
	id, err := url.PathUnescape(name)
	if err != nil {
		return errf(http.StatusNotFound, "no extension named "+strconv.Quote(name)+" is listed here")
	}
	return s.reportForm(c, id, true)
}

// reportForm files the report a package page's form sent for id (from an extension's page
// when extension is true). It answers with a confirmation page, or a page naming each
// problem and its rule id.
func (s *Server) reportForm(c echo.Context, id string, extension bool) error {
	if err := s.checkSameOrigin(c); err != nil {
		return s.reportRefused(c, id, extension, err)
	}
	in, err := s.reportInput(c, id, false)
	if err != nil {
		return s.reportRefused(c, id, extension, err)
	}
	r, err := s.svc.SubmitReport(c.Request().Context(), in)
	if err != nil {
		return s.reportRefused(c, id, extension, err)
	}
	p := web.ReportResultPage{Meta: s.meta("Report filed", "", ""), PackageID: r.PackageID, PackageURL: pageURLOf(r.PackageID, extension),
		Filed: true, ReportID: r.ID, Kind: r.Kind, FiledOn: r.CreatedAt.Format("2006-01-02")}
	return render(c, http.StatusOK, web.ReportResult(p))
}

// reportRefused renders a refusal of the form as a page with its problems; other errors
// go to the error handler.
func (s *Server) reportRefused(c echo.Context, id string, extension bool, err error) error {
	var rf *ingest.Refusal
	if !errors.As(err, &rf) {
		return err
	}
	p := web.ReportResultPage{Meta: s.meta("Report not filed", "", "")}
	if s.listedPage(id, extension) {
		p.PackageID, p.PackageURL = id, pageURLOf(id, extension)
	}
	for _, pr := range rf.Problems {
		p.Problems = append(p.Problems, web.ReportProblem{Rule: pr.Rule, Message: pr.Message})
	}
	return render(c, statusOf(err), web.ReportResult(p))
}

// listedPage reports whether id has a page here of that kind (an extension's, or a plugin's
// or canvas's), so a refusal may link back to it.
func (s *Server) listedPage(id string, extension bool) bool {
	it, ok := s.svc.Catalog().Item(id)
	return ok && (it.Kind == "extension") == extension
}

// pageURLOf is the path of id's page: /extensions/{name} or /plugins/{id}.
func pageURLOf(id string, extension bool) string {
	if extension {
		return extensionPageURL(id)
	}
	return packagePageURL(id)
}

func packagePageURL(id string) string { return "/plugins/" + url.PathEscape(id) }

func extensionPageURL(id string) string { return "/extensions/" + url.PathEscape(id) }

// reportSection is the page's report form, posting to page+"/report", and the resolutions
// of id's reports that led to an action.
func (s *Server) reportSection(c echo.Context, id, page string, versions []web.VersionRow) (web.ReportSection, error) {
	rs, err := s.svc.ActionedReports(c.Request().Context(), id)
	if err != nil {
		return web.ReportSection{}, err
	}
	sec := web.ReportSection{FormURL: page + "/report", MaxReason: ingest.MaxReportReason}
	for _, v := range versions {
		sec.Versions = append(sec.Versions, v.Version)
	}
	for _, r := range rs {
		sec.Notices = append(sec.Notices, web.ReportNotice{Kind: r.Kind, Version: r.Version, ReportedOn: r.CreatedAt.Format("2006-01-02"),
			ResolvedOn: r.Resolution.At.Format("2006-01-02"), Action: r.Resolution.Action, Resolution: r.Resolution.Text})
	}
	return sec, nil
}

// handleReportList is GET /api/v1/admin/reports?open=true&package=ID&limit=N (admin):
// reports newest first, reporter hashes included (equal hashes are one address).
func (s *Server) handleReportList(c echo.Context) error {
	limit, err := queryInt(c, "limit", 500, 1, 500, "the most reports one answer holds")
	if err != nil {
		return err
	}
	rs, err := s.svc.Reports(c.Request().Context(), c.QueryParam("open") == "true", c.QueryParam("package"), int(limit))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"reports": rs})
}

// resolveBody is the body of a resolution.
type resolveBody struct {
	Resolution string `json:"resolution"`
	Action     string `json:"action"`
}

// handleReportResolve is POST /api/v1/admin/reports/{report}/resolve {"resolution",
// "action"} (admin): action is none (the default), yanked, quarantined or deprecated.
func (s *Server) handleReportResolve(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("report"), 10, 64)
	if err != nil || id <= 0 {
		return errf(http.StatusNotFound, "no report has the id "+strconv.Quote(c.Param("report"))+": report ids are positive integers (GET /api/v1/admin/reports)")
	}
	var b resolveBody
	if err := bindJSON(c, ingest.MaxReportBody, &b, false, `{"resolution": "...", "action": "yanked"}`); err != nil {
		return err
	}
	if strings.TrimSpace(b.Action) == "" {
		b.Action = "none"
	}
	r, err := s.svc.ResolveReport(c.Request().Context(), actorOf(c), id, b.Resolution, b.Action)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}

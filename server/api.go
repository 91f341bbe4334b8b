package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/rules"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify/signature"
)

type apiPlugin struct {
	ID            string            `json:"id"`
	Kind          string            `json:"kind"`
	Name          string            `json:"name"`
	Description   string            `json:"description"`
	Author        string            `json:"author"`
	Categories    []string          `json:"categories"`
	Version       string            `json:"version"`
	IconURL       *string           `json:"icon_url"`
	RepoURL       string            `json:"repo_url"`
	PackageURL    string            `json:"package_url"`
	PackageSHA256 string            `json:"package_sha256"`
	Downloads     int64             `json:"downloads"`
	UpdatedAt     time.Time         `json:"updated_at"`
	Featured      bool              `json:"featured"`
	Signature     *signature.Result `json:"signature"`
	Deprecated    *apiDeprecation   `json:"deprecated"`
	URL           string            `json:"url"`
}

type apiDeprecation struct {
	Reason      string `json:"reason"`
	Replacement string `json:"replacement,omitempty"`
}

type apiVersion struct {
	Version    string            `json:"version"`
	Kind       string            `json:"kind"`
	SHA256     string            `json:"sha256"`
	Size       int64             `json:"size"`
	CreatedAt  time.Time         `json:"created_at"`
	Yanked     bool              `json:"yanked"`
	YankReason string            `json:"yank_reason,omitempty"`
	Legacy     bool              `json:"legacy"` // outside the version grammar: published before it, kept downloadable
	Downloads  int64             `json:"downloads"`
	PackageURL string            `json:"package_url"`
	Signature  *signature.Result `json:"signature"`
	Warnings   problem.List      `json:"warnings"`
	Log        *logRef           `json:"log,omitempty"` // "recorded in the log at #N": its publish record
	// Quarantine is the reason the version (or its whole package) is quarantined: its
	// download answers 410 (docs/quarantine.md). Absent when it is not.
	Quarantine *apiQuarantine `json:"quarantine,omitempty"`
}

type apiPluginDetail struct {
	apiPlugin
	Versions []apiVersion `json:"versions"`
}

type apiList struct {
	Total int `json:"total"`
	// TotalIsLowerBound: a text search stopped counting at store.SearchCap.
	TotalIsLowerBound bool        `json:"total_is_lower_bound,omitempty"`
	Page              int         `json:"page"`
	PerPage           int         `json:"per_page"`
	Next              *string     `json:"next"`
	Prev              *string     `json:"prev"`
	Plugins           []apiPlugin `json:"plugins"`
}

// searchParams reads q, kind, category, sort, page and per_page.
func searchParams(c echo.Context, defaultPer int) (store.SearchQuery, int, error) {
	q := store.SearchQuery{Q: c.QueryParam("q"), Kind: c.QueryParam("kind"), Category: c.QueryParam("category"), Sort: c.QueryParam("sort")}
	switch q.Sort {
	case "", "relevance", "name", "recent", "downloads":
	default:
		return q, 0, errf(http.StatusBadRequest, "sort must be relevance, name, recent or downloads")
	}
	switch q.Kind {
	case "", "plugin", "canvas", "extension":
	default:
		return q, 0, errf(http.StatusBadRequest, "kind must be plugin, canvas or extension")
	}
	page, err := pageParam(c)
	if err != nil {
		return q, 0, err
	}
	per := defaultPer
	if v := c.QueryParam("per_page"); v != "" {
		if per, err = strconv.Atoi(v); err != nil || per < 1 || per > 100 {
			return q, 0, errf(http.StatusBadRequest, "per_page must be a whole number from 1 to 100")
		}
	}
	if len(q.Q) > 200 {
		return q, 0, errf(http.StatusBadRequest, "q is limited to 200 characters")
	}
	if p := categoryProblem(q.Category); p != "" {
		return q, 0, errf(http.StatusBadRequest, "category "+p)
	}
	q.Limit, q.Offset = per, (page-1)*per
	return q, page, nil
}

// maxPage bounds ?page=: no listing needs more (10,000 pages of 100), and a page number
// past it is refused before any work.
const maxPage = 10000

// pageParam reads ?page= (1 when absent): a whole number from 1 to maxPage, else 400.
func pageParam(c echo.Context) (int, error) {
	v := c.QueryParam("page")
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxPage {
		return 0, errf(http.StatusBadRequest, fmt.Sprintf("page must be a whole number from 1 to %d, found %.20q", maxPage, v))
	}
	return n, nil
}

// handlePluginList is GET /api/v1/plugins: search, filter, sort and paginate, by the same
// rules as the pages (a page past the last is 404; a text search counts up to
// store.SearchCap, then says total_is_lower_bound).
func (s *Server) handlePluginList(c echo.Context) error {
	q, n, err := searchParams(c, 20)
	if err != nil {
		return err
	}
	l, err := s.listing(c.Request().Context(), q, false)
	if err != nil {
		return err
	}
	if err := pageInRange(n, q.Limit, l); err != nil {
		return err
	}
	page := n
	out := apiList{Total: l.total, TotalIsLowerBound: l.more, Page: page, PerPage: q.Limit, Plugins: []apiPlugin{}}
	for _, it := range l.items {
		out.Plugins = append(out.Plugins, s.apiPluginOf(it))
	}
	total := l.total
	link := func(p int) *string {
		v := c.QueryParams()
		v.Set("page", strconv.Itoa(p))
		u := s.cfg.PublicURL + "/api/v1/plugins?" + v.Encode()
		return &u
	}
	if q.Offset+q.Limit < total {
		out.Next = link(page + 1)
	}
	if page > 1 {
		out.Prev = link(page - 1)
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) apiPluginOf(it *ingest.Item) apiPlugin {
	p := apiPlugin{ID: it.ID, Kind: it.Kind, Name: it.Name(), Description: it.Description(), Author: it.Author(),
		Categories: it.Categories(), Version: it.Latest.Version, PackageURL: s.svc.PackageURL(it.ID, it.Latest.Version),
		PackageSHA256: it.Latest.SHA256, Downloads: it.Downloads, UpdatedAt: it.UpdatedAt, Featured: it.Featured(),
		Signature: it.Signature, URL: s.pageURL(it), RepoURL: it.RepoURL()}
	if it.IconURL != "" {
		p.IconURL = &it.IconURL
	}
	if pk := it.Package; pk != nil && pk.DeprecatedReason != "" {
		p.Deprecated = &apiDeprecation{Reason: pk.DeprecatedReason, Replacement: pk.DeprecatedReplacement}
	}
	return p
}

func (s *Server) pageURL(it *ingest.Item) string {
	if it.Kind == "extension" {
		return s.cfg.PublicURL + "/extensions/" + url.PathEscape(it.ID)
	}
	return s.cfg.PublicURL + "/plugins/" + url.PathEscape(it.ID)
}

// handlePluginShow is GET /api/v1/plugins/{id}: metadata and every version.
func (s *Server) handlePluginShow(c echo.Context) error {
	it, ok := s.svc.Catalog().Item(pathParam(c, "id"))
	if !ok { // a quarantined package is still described, each version saying so (quarantine.go)
		var err error
		if it, ok, err = s.quarantinedPage(c, pathParam(c, "id")); err != nil {
			return err
		}
	}
	if !ok {
		return errf(http.StatusNotFound, "no listed plugin "+truncateForMessage(pathParam(c, "id")))
	}
	rels, err := s.md.Releases(c.Request().Context(), it.ID)
	if err != nil {
		return err
	}
	ingest.SortReleases(rels)
	out := apiPluginDetail{apiPlugin: s.apiPluginOf(it), Versions: []apiVersion{}}
	refs, err := s.logRefs(c, it.ID)
	if err != nil {
		return err
	}
	for _, r := range rels {
		out.Versions = append(out.Versions, s.apiVersionOf(r))
		out.Versions[len(out.Versions)-1].Log = logRefOf(refs, r.Version)
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) apiVersionOf(r *store.Release) apiVersion {
	v := apiVersion{Version: r.Version, Kind: r.Kind, SHA256: r.SHA256, Size: r.Size, CreatedAt: r.CreatedAt, Yanked: r.Yanked,
		YankReason: r.YankReason, Legacy: ingest.Legacy(r), Downloads: r.Downloads, PackageURL: s.svc.PackageURL(r.PackageID, r.Version), Warnings: r.Warnings.WithDocs(rules.Linker(s.cfg.PublicURL)),
		Quarantine: s.apiQuarantineOf(r.PackageID, r.Version)}
	if v.Warnings == nil {
		v.Warnings = problem.List{}
	}
	if len(r.Signature) > 0 {
		var sig signature.Result
		if json.Unmarshal(r.Signature, &sig) == nil {
			v.Signature = &sig
		}
	}
	return v
}

// handleVersionShow is GET /api/v1/plugins/{id}/versions/{version}.
func (s *Server) handleVersionShow(c echo.Context) error {
	r, err := s.md.Release(c.Request().Context(), pathParam(c, "id"), pathParam(c, "version"))
	if errors.Is(err, store.ErrNotFound) {
		return errf(http.StatusNotFound, "no version "+truncateForMessage(pathParam(c, "version"))+" of "+truncateForMessage(pathParam(c, "id")))
	}
	if err != nil {
		return err
	}
	refs, err := s.logRefs(c, r.PackageID)
	if err != nil {
		return err
	}
	v := s.apiVersionOf(r)
	v.Log = logRefOf(refs, r.Version)
	return c.JSON(http.StatusOK, v)
}

type reasonBody struct {
	Reason      string `json:"reason"`
	Replacement string `json:"replacement"`
}

// maxReasonChars and maxReplacementChars bound a yank's or deprecation's reason and a
// deprecation's replacement id, in characters.
const (
	maxReasonChars      = 1000
	maxReplacementChars = 214
)

func bindReason(c echo.Context) (reasonBody, error) {
	var b reasonBody
	if c.Request().ContentLength == 0 {
		return b, nil
	}
	if err := bindJSON(c, 64<<10, &b, false, `{"reason": "..."}`); err != nil {
		return b, err
	}
	// The limits count characters, not bytes: 400 CJK characters are 1,200 bytes.
	if n := utf8.RuneCountInString(b.Reason); n > maxReasonChars {
		return b, errf(http.StatusBadRequest, fmt.Sprintf("reason is limited to %d characters, found %d: shorten it", maxReasonChars, n))
	}
	if n := utf8.RuneCountInString(b.Replacement); n > maxReplacementChars {
		return b, errf(http.StatusBadRequest, fmt.Sprintf("replacement is limited to %d characters (a package id's limit), found %d: name the package that replaces this one", maxReplacementChars, n))
	}
	// Both reach index.json and the pages verbatim: no control or format characters (a
	// line break or a bidi override would forge or hide text), one line.
	if p := manifest.TextProblem(b.Reason, false); p != "" {
		return b, errf(http.StatusBadRequest, fmt.Sprintf("reason (%d bytes) holds %s: send one line of plain text", len(b.Reason), p))
	}
	if b.Replacement != "" && !replacementRE.MatchString(b.Replacement) {
		return b, errf(http.StatusBadRequest, fmt.Sprintf("replacement %q is not a package id: expected a plugin id (%s) or an extension name such as @scope/name",
			truncateForMessage(b.Replacement), "lowercase letters, digits, '.', '_', '-'"))
	}
	return b, nil
}

// categoryProblem says why cat cannot be a category (one of manifest.Categories() or a
// plugins.yaml curation tag), or "": a control or format character (SQLite's LIKE stops at
// a NUL, so "\x00x" would match every package) or a space (categories are stored
// space-separated, so "a b" would match across two) is never part of one.
func categoryProblem(cat string) string {
	if p := manifest.TextProblem(cat, false); p != "" {
		return fmt.Sprintf("holds %s: send a category name such as %s", p, strings.Join(manifest.Categories(), ", "))
	}
	if strings.ContainsFunc(cat, unicode.IsSpace) {
		return fmt.Sprintf("%q holds a space: send one category name such as %s", truncateForMessage(cat), strings.Join(manifest.Categories(), ", "))
	}
	if len(cat) > 64 {
		return fmt.Sprintf("is %d bytes: a category name is at most 64", len(cat))
	}
	return ""
}

// oneLineText reports whether s is safe to echo back on a page: no control or format
// characters (manifest.TextProblem), one line.
func oneLineText(s string) bool { return manifest.TextProblem(s, false) == "" }

// replacementRE is what a deprecation's replacement may name: a plugin id (the manifest id
// pattern, ^[a-z0-9][a-z0-9._-]*$) or an npm-style extension name, optionally scoped; the
// two patterns of plugins.yaml ids, so no URL (javascript:) or markup gets through.
var replacementRE = regexp.MustCompile(`^(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$`)

// truncateForMessage shortens s for quoting in an error message.
func truncateForMessage(s string) string {
	if r := []rune(s); len(r) > 64 {
		return string(r[:64]) + "…"
	}
	return s
}

// handleYank is POST /api/v1/plugins/{id}/versions/{version}/yank {"reason"}.
func (s *Server) handleYank(c echo.Context) error {
	b, err := bindReason(c)
	if err != nil {
		return err
	}
	if err := s.svc.Yank(c.Request().Context(), actorOf(c), pathParam(c, "id"), pathParam(c, "version"), true, b.Reason); err != nil {
		return err
	}
	return s.handleVersionShow(c)
}

// handleUnyank is POST /api/v1/plugins/{id}/versions/{version}/unyank.
func (s *Server) handleUnyank(c echo.Context) error {
	if err := s.svc.Yank(c.Request().Context(), actorOf(c), pathParam(c, "id"), pathParam(c, "version"), false, ""); err != nil {
		return err
	}
	return s.handleVersionShow(c)
}

// handleDeprecate is POST /api/v1/plugins/{id}/deprecate {"reason","replacement"}; an
// empty reason clears the deprecation.
func (s *Server) handleDeprecate(c echo.Context) error {
	b, err := bindReason(c)
	if err != nil {
		return err
	}
	if err := s.svc.Deprecate(c.Request().Context(), actorOf(c), pathParam(c, "id"), b.Reason, b.Replacement); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"id": pathParam(c, "id"), "reason": b.Reason, "replacement": b.Replacement})
}

// handleAudit is GET /api/v1/admin/audit?limit=&before= (admin).
func (s *Server) handleAudit(c echo.Context) error {
	// Parameters are checked as the webhook delivery log's are: a malformed one is a 400
	// naming it, never the default page in silence.
	limit, err := queryInt(c, "limit", 100, 1, 500, "the most entries one page holds")
	if err != nil {
		return err
	}
	before, err := queryInt(c, "before", 0, 1, math.MaxInt64, "an entry id: the entries older than it")
	if err != nil {
		return err
	}
	entries, err := s.md.AuditLog(c.Request().Context(), int(limit), before)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"entries": entries})
}

// handleReload is POST /api/v1/admin/reload[?force=true] (admin): re-read plugins.yaml.
func (s *Server) handleReload(c echo.Context) error {
	if s.cfg.Reload == nil {
		return errf(http.StatusNotFound, "reload is not available")
	}
	force := c.QueryParam("force") == "true"
	if err := s.cfg.Reload(c.Request().Context(), actorOf(c).Name, force); err != nil {
		// A *ingest.Refusal (the list's problems, the shrink guard, a host limit) maps to 422
		// with its rule ids; anything else (the database, an unreadable file) is a logged 500.
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"ok": true, "plugins": len(s.svc.List().Plugins), "extensions": len(s.svc.List().Extensions)})
}

// handleBlobStatus is GET /api/v1/admin/blobs (admin): the blobs found damaged (missing,
// truncated or corrupt) and the releases they keep out of the index.
func (s *Server) handleBlobStatus(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]any{"damaged": s.svc.Damaged()})
}

// handleIndexStatus is GET /api/v1/admin/index (admin): the documents in force and the last
// refused rebuild.
func (s *Server) handleIndexStatus(c echo.Context) error {
	d := s.svc.Documents()
	out := map[string]any{"refusal": s.svc.LastRefusal()}
	if d != nil {
		out["serial"], out["entries"], out["bytes"], out["etag"] = d.Serial, d.Plugins, d.Kandev.Body.Len(), d.Kandev.ETag
	}
	return c.JSON(http.StatusOK, out)
}

package server

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"unicode"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/rules"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/web"
)

const pagePerPage = 24

// render renders a component into a buffer first, so a template error becomes a clean 500
// rather than half a page.
func render(c echo.Context, status int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return fmt.Errorf("server: render %s: %w", c.Path(), err)
	}
	return c.HTMLBlob(status, buf.Bytes())
}

func (s *Server) meta(title, desc, path string) web.Meta {
	return web.Meta{SiteName: s.cfg.SiteName, Title: title, Description: desc, CanonicalURL: s.cfg.PublicURL + path}
}

// handleHome is GET /: search, kind tabs, category filters, sort, featured row, results.
func (s *Server) handleHome(c echo.Context) error {
	q, page, err := searchParams(c, pagePerPage)
	if err != nil {
		return err
	}
	q.Limit = pagePerPage
	q.Offset = (page - 1) * pagePerPage
	ctx := c.Request().Context()
	l, err := s.listing(ctx, q, true)
	if err != nil {
		return err
	}
	if err := pageInRange(page, pagePerPage, l); err != nil {
		return err
	}
	p := web.HomePage{Meta: s.meta("", "Plugins, canvases and Curupira extensions, checked and signed.", "/"),
		Query: q.Q, Kind: q.Kind, Category: q.Category, Sort: q.Sort, Cards: s.cardsOf(l.items),
		Categories: categoryFilters(l, q.Category), Total: l.total, TotalMore: l.more, Page: page, PerPage: pagePerPage,
		Sources: s.sources()}
	p.Meta.PageSearch = true
	if !hasText(q.Q) && q.Category == "" && page == 1 {
		p.Featured = s.cardsOf(s.svc.Catalog().Views().Featured(q.Kind))
	}
	if page > 1 {
		p.PrevURL = web.SearchURL(q.Q, q.Kind, q.Category, q.Sort, page-1)
	}
	if q.Offset+q.Limit < l.total {
		p.NextURL = web.SearchURL(q.Q, q.Kind, q.Category, q.Sort, page+1)
	}
	return render(c, http.StatusOK, web.Home(p))
}

// page is one page of a listing: its items and how many there are in all (more: a text
// search counted store.SearchCap and stopped, so total is a lower bound), and when asked
// for, the category counts of q's text and kind (partial: lower bounds, for the same reason).
type page struct {
	items   []*ingest.Item
	total   int
	more    bool
	counts  map[string]int
	partial bool
}

// listing answers q: without text from the catalog's precomputed orders and counts (a
// slice, whatever the catalogue's size), with text from the search table (bounded, see
// store.SearchCap).
func (s *Server) listing(ctx context.Context, q store.SearchQuery, counted bool) (page, error) {
	cat := s.svc.Catalog()
	if !hasText(q.Q) {
		items, total := cat.Views().List(q.Kind, q.Category, q.Sort, q.Offset, q.Limit)
		return page{items: items, total: total, counts: cat.Views().CategoryCounts(q.Kind)}, nil
	}
	var res store.SearchResult
	var err error
	if counted {
		res, err = s.md.SearchCounted(ctx, q)
	} else {
		res.IDs, res.Total, err = s.md.Search(ctx, q)
	}
	if err != nil {
		return page{}, err
	}
	p := page{total: min(res.Total, store.SearchCap), more: res.Total > store.SearchCap, counts: res.Counts, partial: res.Partial}
	for _, id := range res.IDs {
		if it, ok := cat.Item(id); ok {
			p.items = append(p.items, it)
		}
	}
	return p, nil
}

// hasText reports whether q has a word to search for (a query of punctuation alone
// lists everything, as the search table does).
func hasText(q string) bool {
	return strings.IndexFunc(q, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// pageInRange refuses a page past the last (page 1 of nothing is an empty listing).
func pageInRange(n, perPage int, l page) error {
	if n > 1 && len(l.items) == 0 {
		last := max(1, (l.total+perPage-1)/perPage)
		return errf(http.StatusNotFound, fmt.Sprintf("there is no page %d: this listing has %d pages (%d entries); go back to page %d", n, last, l.total, last))
	}
	return nil
}

func (s *Server) cardsOf(items []*ingest.Item) []web.Card {
	cards := make([]web.Card, 0, len(items))
	for _, it := range items {
		cards = append(cards, s.cardOf(it))
	}
	return cards
}

// categoryFilters are the category filters of a listing counted for q's free text and
// kind: each count is what following that filter's link lists (at least that, marked
// AtLeast, when a text search stopped counting at store.SearchCap). Categories with
// nothing to list are left out, except selected, so the reader still sees it chosen.
func categoryFilters(l page, selected string) []web.CategoryCount {
	out := make([]web.CategoryCount, 0, len(l.counts)+1)
	for name, n := range l.counts {
		out = append(out, web.CategoryCount{Name: name, Count: n, AtLeast: l.partial})
	}
	if _, ok := l.counts[selected]; !ok && selected != "" {
		out = append(out, web.CategoryCount{Name: selected, AtLeast: l.partial})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (s *Server) cardOf(it *ingest.Item) web.Card {
	return web.Card{ID: it.ID, Kind: it.Kind, Name: it.Name(), Author: it.Author(), Description: it.Description(),
		Version: it.Latest.Version, IconURL: it.IconURL, Verified: it.Signature != nil,
		Official: it.Entry != nil && it.Entry.Official, Downloads: it.Downloads, Categories: it.Categories(),
		URL: strings.TrimPrefix(s.pageURL(it), s.cfg.PublicURL), Publisher: publisherOf(it),
		Deprecated: it.Package != nil && it.Package.DeprecatedReason != "", YankedVersion: it.YankedNewest}
}

// publisherOf is the curated owner whose publisher page lists it: plugins.yaml owners[0].
func publisherOf(it *ingest.Item) string {
	if owners, _ := ownersOf(it); len(owners) > 0 {
		return owners[0]
	}
	return ""
}

// handlePluginPage is GET /plugins/{id}: one plugin or canvas.
func (s *Server) handlePluginPage(c echo.Context) error {
	it, ok := s.svc.Catalog().Item(pathParam(c, "id"))
	if !ok { // a quarantined package keeps its page, with the reason (quarantine.go)
		var err error
		if it, ok, err = s.quarantinedPage(c, pathParam(c, "id")); err != nil {
			return err
		}
	}
	if !ok || it.Kind == "extension" {
		return errf(http.StatusNotFound, "no plugin named "+truncateForMessage(pathParam(c, "id"))+" is listed here")
	}
	rels, err := s.md.Releases(c.Request().Context(), it.ID)
	if err != nil {
		return err
	}
	ingest.SortReleases(rels)
	m, err := s.svc.Manifest(c.Request().Context(), it) // the whole manifest, for this page only
	if err != nil {
		return err
	}
	p := web.PluginPage{Meta: s.meta(it.Name(), it.Description(), "/plugins/"+url.PathEscape(it.ID)), Card: s.cardOf(it),
		Permissions: web.PermissionsFor(permissionInput(m)), Versions: s.versionRows(rels, it.Latest),
		Deprecated: deprecationOf(it), Archived: archivedOf(it), Install: web.NewInstall(s.cfg.PublicURL+"/index.json", s.svc.PackageURL(it.ID, it.Latest.Version), it.Latest.SHA256),
		Verification: verificationOf(it), RepoURL: it.RepoURL(), License: m.License,
		MinKandevVersion: m.MinKandevVersion, UpdatedAt: it.UpdatedAt.Format("2006-01-02"), Warnings: warningsOf(it)}
	if m.Distribution != nil {
		p.License = m.Distribution.License
	}
	p.Previews = s.previewsOf(it)
	if len(it.Entry.Owners) > 0 {
		p.PublisherURL = web.PublisherURL(it.Entry.Owners[0])
	}
	if err := s.markCurated(c, it.ID, p.Versions); err != nil {
		return err
	}
	p.Quarantined = s.quarantineNotices(it.ID, p.Versions)
	d, err := s.packageDetails(c, it, p.Versions)
	if err != nil {
		return err
	}
	p.RunsOn, p.Settings, p.ChangelogHTML, p.Downloads, p.Repo = runsOnOf(it), web.SettingsFor(m.ConfigSchema), d.changelog, d.downloads, d.repo
	if p.READMEHTML, err = s.readmeOf(c, it); err != nil {
		return err
	}
	if p.Verification.RegistryLog, err = s.logEntryOf(c, it.ID, it.Latest.Version); err != nil {
		return err
	}
	if p.Reports, err = s.reportSection(c, it.ID, packagePageURL(it.ID), p.Versions); err != nil {
		return err
	}
	return render(c, http.StatusOK, web.Plugin(p))
}

// handleExtensionPage is GET /extensions/{name}: one Curupira extension (npm-style names
// may contain a slash).
func (s *Server) handleExtensionPage(c echo.Context) error {
	name, _ := url.PathUnescape(c.Param("*"))
	it, ok := s.svc.Catalog().Item(name)
	if !ok { // a quarantined extension keeps its page, with the reason (quarantine.go)
		var err error
		if it, ok, err = s.quarantinedPage(c, name); err != nil {
			return err
		}
	}
	if !ok || it.Kind != "extension" {
		return errf(http.StatusNotFound, "no extension named "+truncateForMessage(name)+" is listed here")
	}
	rels, err := s.md.Releases(c.Request().Context(), it.ID)
	if err != nil {
		return err
	}
	ingest.SortReleases(rels)
	m := it.Extension
	p := web.ExtensionPage{Meta: s.meta(it.Name(), it.Description(), "/extensions/"+it.ID), Card: s.cardOf(it),
		TriggerTypes: m.TriggerTypes, Runtime: m.Runtime, ProtocolVersion: m.ProtocolVersion, LaunchCommand: launchCommand(m.Launch.Type, m.Launch.Package, m.Launch.Version, m.Launch.Command, m.Launch.Args),
		Versions: s.versionRows(rels, it.Latest), Deprecated: deprecationOf(it), Archived: archivedOf(it),
		Install:      web.NewInstall(s.cfg.PublicURL+"/curupira/index.json", s.svc.PackageURL(it.ID, it.Latest.Version), it.Latest.SHA256),
		Verification: verificationOf(it), RepoURL: it.RepoURL(), License: m.License,
		UpdatedAt: it.UpdatedAt.Format("2006-01-02"), Warnings: warningsOf(it)}
	if len(it.ExtEntry.Owners) > 0 {
		p.PublisherURL = web.PublisherURL(it.ExtEntry.Owners[0])
	}
	p.Quarantined = s.quarantineNotices(it.ID, p.Versions)
	d, err := s.packageDetails(c, it, p.Versions)
	if err != nil {
		return err
	}
	p.RunsOn, p.ChangelogHTML, p.Downloads, p.Repo = web.LaunchRunsOn(m.Launch.Type), d.changelog, d.downloads, d.repo
	if p.READMEHTML, err = s.readmeOf(c, it); err != nil {
		return err
	}
	if p.Verification.RegistryLog, err = s.logEntryOf(c, it.ID, it.Latest.Version); err != nil {
		return err
	}
	if p.Reports, err = s.reportSection(c, it.ID, extensionPageURL(it.ID), p.Versions); err != nil {
		return err
	}
	return render(c, http.StatusOK, web.Extension(p))
}

// readmeOf is the stored README HTML of an item's latest release, loaded for the one page
// that shows it: the catalog does not hold README HTML.
func (s *Server) readmeOf(c echo.Context, it *ingest.Item) (web.HTML, error) {
	html, err := s.md.READMEHTML(c.Request().Context(), it.Latest.ID)
	if err != nil {
		return web.HTML{}, err
	}
	return web.StoredREADME(html), nil
}

func launchCommand(typ, pkg, version, command string, args []string) string {
	switch typ {
	case "npx":
		return "npx -y " + pkg + "@" + version
	default:
		return strings.TrimSpace(command + " " + strings.Join(args, " "))
	}
}

// handlePublisherPage is GET /publishers/{name}: what one publisher (a plugins.yaml owner)
// maintains, a page of cards at a time (?page=N). The page goes by the owner's name; the
// authors its manifests name are labels.
func (s *Server) handlePublisherPage(c echo.Context) error {
	name := c.Param("name")
	n, err := pageParam(c)
	if err != nil {
		return err
	}
	pv := s.svc.Catalog().Views().Publisher(name)
	if pv == nil {
		return errf(http.StatusNotFound, "no publisher named "+truncateForMessage(name)+" maintains anything listed here")
	}
	l := page{items: windowOf(pv.Items, (n-1)*pagePerPage, pagePerPage), total: len(pv.Items)}
	if err := pageInRange(n, pagePerPage, l); err != nil {
		return err
	}
	p := web.PublisherPage{Meta: s.meta(name, "Packages published by "+name, web.PublisherURL(name)), Name: name,
		Repos: pv.Repos[:min(len(pv.Repos), publisherLabels)], MoreRepos: max(0, len(pv.Repos)-publisherLabels),
		Authors: pv.Authors[:min(len(pv.Authors), publisherLabels)], MoreAuthors: max(0, len(pv.Authors)-publisherLabels),
		Cards: s.cardsOf(l.items), Total: l.total, Page: n, PerPage: pagePerPage}
	base := web.PublisherURL(name)
	if n > 1 {
		p.PrevURL = pageURL(base, n-1)
	}
	if n*pagePerPage < l.total {
		p.NextURL = pageURL(base, n+1)
	}
	return render(c, http.StatusOK, web.Publisher(p))
}

// publisherLabels is how many repositories and authors a publisher page names; the rest
// are counted ("and 2,476 more"), so the page stays the size of one page of cards.
const publisherLabels = 24

// pageURL is base at page n (page 1 is base itself).
func pageURL(base string, n int) string {
	if n <= 1 {
		return base
	}
	return fmt.Sprintf("%s?page=%d", base, n)
}

// windowOf is items[offset:offset+limit], clipped.
func windowOf(items []*ingest.Item, offset, limit int) []*ingest.Item {
	if offset >= len(items) {
		return nil
	}
	return items[offset:min(len(items), offset+limit)]
}

func ownersOf(it *ingest.Item) ([]string, string) {
	if it.Entry != nil {
		return it.Entry.Owners, it.Entry.Repo
	}
	return it.ExtEntry.Owners, it.ExtEntry.Repo
}

// handleCategoryPage is GET /categories/{name}. The page has no search box (the nav
// search goes to the home page), so ?q= is ignored: a text search here would bypass the
// search rate limit, and one that found nothing would call the category missing.
func (s *Server) handleCategoryPage(c echo.Context) error {
	q, n, err := searchParams(c, pagePerPage)
	if err != nil {
		return err
	}
	q.Q, q.Category, q.Limit, q.Offset = "", c.Param("name"), pagePerPage, (n-1)*pagePerPage
	if p := categoryProblem(q.Category); p != "" {
		return errf(http.StatusNotFound, "no such category: the name "+p)
	}
	ctx := c.Request().Context()
	l, err := s.listing(ctx, q, false)
	if err != nil {
		return err
	}
	if l.total == 0 {
		return errf(http.StatusNotFound, "no category named "+q.Category)
	}
	if err := pageInRange(n, pagePerPage, l); err != nil {
		return err
	}
	// The sidebar links to plain category pages (every kind, no query), so it counts those.
	counts := categoryFilters(page{counts: s.svc.Catalog().Views().CategoryCounts("")}, q.Category)
	p := web.CategoryPage{Meta: s.meta(q.Category, "Packages in "+q.Category, web.CategoryURL(q.Category)), Name: q.Category,
		Cards: s.cardsOf(l.items), Categories: counts, Total: l.total, Page: n, PerPage: pagePerPage}
	base := web.CategoryURL(q.Category)
	if n > 1 {
		p.PrevURL = pageURL(base, n-1)
	}
	if q.Offset+q.Limit < l.total {
		p.NextURL = pageURL(base, n+1)
	}
	return render(c, http.StatusOK, web.Category(p))
}

// handleDocs is GET /docs, /docs/{authors|operators}, /docs/reference and
// /docs/reference/{section}.
func (s *Server) handleDocs(c echo.Context) error {
	section := c.Param("section")
	switch {
	case c.Path() == rules.DocsPath+"/:section":
		return s.docsReference(c, section)
	case section == "reference":
		return s.docsReference(c, "")
	}
	title := map[string]string{web.DocsIndex: "Documentation", web.DocsAuthors: "Publishing from CI", web.DocsOperators: "Running the registry"}
	t, ok := title[section]
	if !ok {
		return errf(http.StatusNotFound, "no documentation page "+section)
	}
	path := "/docs"
	if section != "" {
		path += "/" + section
	}
	return render(c, http.StatusOK, web.Docs(web.DocsPage{Meta: s.meta(t, t, path), Section: section, PublicURL: s.cfg.PublicURL, Sources: s.sources()}))
}

// docsReference renders the rule reference overview (section "") or one section.
func (s *Server) docsReference(c echo.Context, section string) error {
	title, path := "Rule reference", rules.DocsPath
	if section != "" {
		sec, ok := rules.SectionOf(section)
		if !ok {
			return errf(http.StatusNotFound, "no rule reference section "+section)
		}
		title, path = sec.Title, rules.DocsPath+"/"+section
	}
	return render(c, http.StatusOK, web.Reference(web.ReferencePage{Meta: s.meta(title, title, path), Section: section}))
}

// handleStatic is GET /static/{hashed name}: embedded CSS, JS and icons, cached for a year.
func (s *Server) handleStatic(c echo.Context) error {
	data, ctype, ok := web.Static(c.Param("file"))
	if !ok {
		return errf(http.StatusNotFound, "no such file")
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	return c.Blob(http.StatusOK, ctype, data)
}

func (s *Server) renderErrorPage(c echo.Context, code int, msg string) error {
	p := web.ErrorPage{Meta: s.meta(http.StatusText(code), "", c.Request().URL.EscapedPath()), Status: code,
		RequestID: c.Response().Header().Get(echo.HeaderXRequestID)}
	p.Meta.NoIndex = true
	if code < 500 {
		p.Message = msg
		// Prefilled in the search box: a control character is never echoed, nor a segment
		// longer than a search may be (q is limited to 200 characters).
		if q := lastSegment(c.Request().URL.Path); oneLineText(q) && len(q) <= 200 {
			p.Query = q
		}
	}
	p.Meta.PageSearch = code < 500 // a 4xx page has its own search box
	return render(c, code, web.Error(p))
}

func lastSegment(p string) string {
	p = strings.TrimRight(p, "/")
	return p[strings.LastIndex(p, "/")+1:]
}

// versionRows lists releases newest version first (version.Compare, the order the index
// uses) and marks latest, the release the index offers, as Latest.
// versionRows maps releases, already in ingest.SortReleases order, to the versions table.
func (s *Server) versionRows(rels []*store.Release, latest *store.Release) []web.VersionRow {
	rows := make([]web.VersionRow, 0, len(rels))
	for _, r := range rels {
		rows = append(rows, web.VersionRow{Version: r.Version, Latest: latest != nil && r.Version == latest.Version,
			CreatedAt: r.CreatedAt.Format("2006-01-02"), Size: r.Size, SHA256: r.SHA256, Yanked: r.Yanked,
			YankReason: r.YankReason, URL: s.svc.PackageURL(r.PackageID, r.Version)})
	}
	return rows
}

func deprecationOf(it *ingest.Item) *web.Deprecation {
	pk := it.Package
	if pk == nil || pk.DeprecatedReason == "" {
		return nil
	}
	d := &web.Deprecation{Reason: pk.DeprecatedReason, Replacement: pk.DeprecatedReplacement}
	if pk.DeprecatedReplacement != "" {
		d.ReplacementURL = "/plugins/" + url.PathEscape(pk.DeprecatedReplacement)
	}
	return d
}

// verificationOf shows what was recorded when the latest release was published.
func verificationOf(it *ingest.Item) web.Verification {
	var v web.Verification
	if f := it.Latest.Facts; f != nil {
		v.Checksums = web.ChecksumsAbsent
		if f.Checksums != nil {
			v.Checksums, v.ChecksumFiles = web.ChecksumsVerified, f.Checksums.Files
		}
	}
	sig := it.Signature
	if sig == nil {
		return v
	}
	v.SignatureType, v.SAN, v.Issuer, v.Repository = sig.Type, sig.SAN, sig.Issuer, sig.Repository
	v.Workflow, v.Ref, v.CommitSHA, v.RunURL, v.KeyFingerprint = sig.Workflow, sig.Ref, sig.CommitSHA, sig.RunURL, sig.KeyFingerprint
	if sig.Type == "sigstore" {
		idx := sig.LogIndex
		v.LogIndex = &idx
		if !sig.IntegratedTime.IsZero() {
			v.IntegratedTime = sig.IntegratedTime.UTC().Format("2006-01-02 15:04:05 UTC")
		}
	}
	return v
}

func warningsOf(it *ingest.Item) []string {
	var out []string
	for _, p := range it.Latest.Warnings {
		out = append(out, p.String())
	}
	return out
}

func permissionInput(m *manifest.Manifest) web.PermissionInput {
	caps := m.Capabilities
	in := web.PermissionInput{ManagedBinary: m.IsManaged(), Events: caps.Events, APIRead: caps.APIRead, APIWrite: caps.APIWrite,
		State: caps.State, Secrets: caps.Secrets, AgentInvoke: caps.AgentInvoke, AgentConversation: caps.AgentConversation,
		Auth: caps.Auth, UserState: caps.UserState}
	for _, w := range m.Webhooks {
		in.Webhooks = append(in.Webhooks, web.AccessPoint{Key: w.Key, Access: w.EffectiveAccess(m.APIVersion)})
	}
	for _, a := range m.Actions {
		access := a.Access
		if access == "" {
			access = "authenticated"
		}
		in.Actions = append(in.Actions, web.AccessPoint{Key: a.Key, Access: access})
	}
	if m.UI != nil {
		for _, w := range m.UI.WebApps {
			in.NetworkOrigins = append(in.NetworkOrigins, w.NetworkOrigins...)
		}
	}
	for _, t := range m.AgentTools {
		in.AgentTools = append(in.AgentTools, t.Name)
	}
	return in
}

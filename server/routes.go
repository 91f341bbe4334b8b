package server

import (
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// routes registers every route of the registry, in one place.
func (s *Server) routes() {
	e := s.e
	e.Pre(middleware.RemoveTrailingSlashWithConfig(middleware.TrailingSlashConfig{RedirectCode: http.StatusMovedPermanently}))
	// The document routes are also answered before the router (index_fast.go), wrapped in
	// pre and then use, so that middleware added to either goes to both. The trailing-slash
	// redirect is left out of theirs: their exact paths have none.
	pre := []echo.MiddlewareFunc{dropUnsafeRequestID}
	use := []echo.MiddlewareFunc{requestID, s.observeRequests, s.recoverPanics, s.logRequests, securityHeaders, s.limitRates}
	e.Pre(pre...)
	e.Use(use...)
	docChain := slices.Concat(pre, use)

	auth := s.svc.Authenticator(s.cfg.AdminSecret)
	authed := s.requireAuth(auth)

	getHead(e, "/healthz", s.handleHealth)
	getHead(e, "/readyz", s.handleReady)
	getHead(e, "/metrics", s.handleMetrics)

	s.routeDocument(e, "/index.json", s.handleKandevIndex, docChain)
	s.routeDocument(e, "/curupira/index.json", s.handleCurupiraIndex, docChain)
	getHead(e, "/index/:name", s.handleIndexShard)
	getHead(e, "/kandev/:kandev/:platform/index.json", s.handleHostIndex)
	getHead(e, "/kandev/:kandev/:platform/index/:shard", s.handleHostShard)
	getHead(e, "/index.json.sig", s.handleKandevIndexSig)
	getHead(e, "/curupira/index.json.sig", s.handleCurupiraIndexSig)
	getHead(e, "/packages/:id/:file", s.handlePackage)
	getHead(e, "/icons/:file", s.handleIcon)
	getHead(e, "/previews/:file", s.handlePreview)
	getHead(e, "/static/:file", s.handleStatic)
	getHead(e, "/log/checkpoint", s.handleLogCheckpoint)
	getHead(e, "/log/key", s.handleLogKey)
	getHead(e, "/log/tile/*", s.handleLogTile)
	getHead(e, "/log/lookup/*", s.handleLogLookup)

	api := e.Group("/api/v1")
	getHead(api, "/openapi.json", s.handleOpenAPI)
	getHead(api, "/plugins", s.handlePluginList)
	getHead(api, "/plugins/:id", s.handlePluginShow)
	getHead(api, "/plugins/:id/versions/:version", s.handleVersionShow)
	getHead(api, "/plugins/:id/compatibility", s.handleCompatibility)
	getHead(api, "/plugins/:id/upgrade", s.handleUpgrade)
	getHead(api, "/index.json", s.handleListing)
	getHead(api, "/index/:file", s.handlePackageIndex)
	getHead(api, "/changes", s.handleChanges)
	getHead(api, "/changes/:page", s.handleStaticChanges)
	api.POST("/packages", s.handlePublish, authed)
	api.POST("/plugins/:id/versions/:version/yank", s.handleYank, authed)
	api.POST("/plugins/:id/versions/:version/unyank", s.handleUnyank, authed)
	api.POST("/plugins/:id/deprecate", s.handleDeprecate, authed)
	api.POST("/plugins/:id/archive", s.handleArchive, authed)
	api.POST("/plugins/:id/unarchive", s.handleUnarchive, authed)
	api.POST("/plugins/:id/reports", s.handleReportAPI)
	api.POST("/auth/oidc", s.handleOIDC)
	api.POST("/tokens/revoke", s.handleTokenRevoke(auth))
	admin := api.Group("/admin", authed, requireAdmin)
	getHead(admin, "/audit", s.handleAudit)
	getHead(admin, "/reports", s.handleReportList)
	admin.POST("/reports/:report/resolve", s.handleReportResolve)
	admin.POST("/reload", s.handleReload)
	getHead(admin, "/index", s.handleIndexStatus)
	getHead(admin, "/blobs", s.handleBlobStatus)
	getHead(admin, "/sync", s.handleSyncStatus)
	admin.POST("/compat/:id/versions/:version", s.handleCompatSet)
	admin.POST("/compat/:id/versions/:version/clear", s.handleCompatClear)
	getHead(admin, "/webhooks/deliveries", s.handleWebhookDeliveries)
	getHead(admin, "/blocklist", s.handleBlocklist)
	admin.POST("/blocklist", s.handleBlocklistAdd)
	admin.POST("/blocklist/:digest/remove", s.handleBlocklistRemove)
	getHead(admin, "/quarantine", s.handleQuarantineList)
	admin.POST("/quarantine/:id", s.handleQuarantinePackage)
	admin.POST("/quarantine/:id/release", s.handleUnquarantinePackage)
	admin.POST("/quarantine/:id/versions/:version", s.handleQuarantineRelease)
	admin.POST("/quarantine/:id/versions/:version/release", s.handleUnquarantineRelease)

	getHead(e, "/", s.handleHome)
	getHead(e, "/plugins/:id", s.handlePluginPage)
	e.POST("/plugins/:id/report", s.handleReportForm)
	getHead(e, "/extensions/*", s.handleExtensionPage)
	e.POST("/extensions/*", s.handleExtensionReportForm) // only /extensions/{name}/report
	getHead(e, "/publishers/:name", s.handlePublisherPage)
	getHead(e, "/categories/:name", s.handleCategoryPage)
	getHead(e, "/docs", s.handleDocs)
	getHead(e, "/docs/:section", s.handleDocs)
	getHead(e, "/docs/reference/:section", s.handleDocs)
	e.RouteNotFound("/*", func(c echo.Context) error { return errf(http.StatusNotFound, "page not found") })
}

// getHead registers h for GET and HEAD, so that HEAD works wherever GET does (net/http
// sends a HEAD response's headers without its body).
func getHead(r interface {
	Add(method, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
}, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	r.Add(http.MethodGet, path, h, m...)
	r.Add(http.MethodHead, path, h, m...)
}

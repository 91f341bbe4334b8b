package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/pluginyard/registry/ingest"
)

// routes registers every route of the registry, in one place.
func (s *Server) routes() {
	e := s.e
	e.Pre(middleware.RemoveTrailingSlashWithConfig(middleware.TrailingSlashConfig{RedirectCode: http.StatusMovedPermanently}))
	e.Pre(dropUnsafeRequestID)
	e.Use(middleware.RequestID())
	e.Use(s.observeRequests)
	e.Use(s.recoverPanics)
	e.Use(s.logRequests)
	e.Use(securityHeaders)
	e.Use(s.limitRates)

	auth := ingest.NewAuthenticator(s.svc.Store(), s.cfg.AdminSecret)
	authed := s.requireAuth(auth)

	e.GET("/healthz", s.handleHealth)
	e.GET("/readyz", s.handleReady)
	e.GET("/metrics", s.handleMetrics)

	e.GET("/index.json", s.handleKandevIndex)
	e.HEAD("/index.json", s.handleKandevIndex)
	e.GET("/curupira/index.json", s.handleCurupiraIndex)
	e.HEAD("/curupira/index.json", s.handleCurupiraIndex)
	e.GET("/packages/:id/:file", s.handlePackage)
	e.HEAD("/packages/:id/:file", s.handlePackage)
	e.GET("/icons/:file", s.handleIcon)
	e.HEAD("/icons/:file", s.handleIcon)
	e.GET("/static/:file", s.handleStatic)

	api := e.Group("/api/v1")
	api.GET("/openapi.json", s.handleOpenAPI)
	api.GET("/plugins", s.handlePluginList)
	api.GET("/plugins/:id", s.handlePluginShow)
	api.GET("/plugins/:id/versions/:version", s.handleVersionShow)
	api.POST("/packages", s.handlePublish, authed)
	api.POST("/plugins/:id/versions/:version/yank", s.handleYank, authed)
	api.POST("/plugins/:id/versions/:version/unyank", s.handleUnyank, authed)
	api.POST("/plugins/:id/deprecate", s.handleDeprecate, authed)
	api.POST("/auth/oidc", s.handleOIDC)
	admin := api.Group("/admin", authed, requireAdmin)
	admin.GET("/audit", s.handleAudit)
	admin.POST("/reload", s.handleReload)
	admin.GET("/index", s.handleIndexStatus)
	admin.GET("/sync", s.handleSyncStatus)

	e.GET("/", s.handleHome)
	e.GET("/plugins/:id", s.handlePluginPage)
	e.GET("/extensions/*", s.handleExtensionPage)
	e.GET("/publishers/:name", s.handlePublisherPage)
	e.GET("/categories/:name", s.handleCategoryPage)
	e.GET("/docs", s.handleDocs)
	e.GET("/docs/:section", s.handleDocs)
	e.RouteNotFound("/*", func(c echo.Context) error { return errf(http.StatusNotFound, "page not found") })
}

package server

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

//go:embed openapi.json
var openAPIDoc []byte

// handleOpenAPI is GET /api/v1/openapi.json.
func (s *Server) handleOpenAPI(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderAccessControlAllowOrigin, "*")
	return c.Blob(http.StatusOK, "application/json", openAPIDoc)
}

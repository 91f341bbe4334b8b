package server

import "github.com/labstack/echo/v4"

// Routes exposes the registered routes to tests.
func (s *Server) Routes() []*echo.Route { return s.e.Routes() }

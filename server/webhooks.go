package server

import (
	"context"
	"math"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
)

// WebhookLog is the webhook delivery log (*store.Store implements it).
type WebhookLog interface {
	WebhookDeliveries(ctx context.Context, q store.WebhookDeliveryQuery) ([]store.WebhookDelivery, error)
}

// apiWebhookDeliveries is the body of GET /api/v1/admin/webhooks/deliveries.
type apiWebhookDeliveries struct {
	// Enabled is true when this process delivers webhooks (serve --webhooks).
	Enabled bool `json:"enabled"`
	// Endpoints are the configured endpoints: name, URL, event filter; never the secret.
	Endpoints  []ingest.WebhookEndpoint `json:"endpoints"`
	Deliveries []store.WebhookDelivery  `json:"deliveries"`
	// NextBefore, when set, is the before= of the next (older) page.
	NextBefore int64 `json:"next_before,omitempty"`
}

// handleWebhookDeliveries is GET /api/v1/admin/webhooks/deliveries?endpoint=&state=&limit=&before=
// (admin): the delivery log, newest first: each event's delivery to each endpoint, its
// state (pending, delivered, dead), attempts, next attempt and last status and error.
func (s *Server) handleWebhookDeliveries(c echo.Context) error {
	q := store.WebhookDeliveryQuery{Endpoint: c.QueryParam("endpoint"), State: c.QueryParam("state")}
	if q.State != "" && !slices.Contains([]string{"pending", "delivered", "dead"}, q.State) {
		return errf(http.StatusBadRequest, "state must be pending, delivered or dead, or left out for all")
	}
	limit, err := queryInt(c, "limit", 100, 1, 500, "the most deliveries one page holds")
	if err != nil {
		return err
	}
	if q.Before, err = queryInt(c, "before", 0, 1, math.MaxInt64, "a delivery id: next_before of the previous page"); err != nil {
		return err
	}
	q.Limit = int(limit)
	ds, err := s.md.WebhookDeliveries(c.Request().Context(), q)
	if err != nil {
		return err
	}
	out := apiWebhookDeliveries{Endpoints: []ingest.WebhookEndpoint{}, Deliveries: ds}
	if s.cfg.Webhooks != nil {
		out.Enabled, out.Endpoints = true, s.cfg.Webhooks.Endpoints
	}
	if len(ds) == q.Limit {
		out.NextBefore = ds[len(ds)-1].ID
	}
	return c.JSON(http.StatusOK, out)
}

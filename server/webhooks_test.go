package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/server"
)

const webhookSecret = "whsec_c2VydmVyLXRlc3Qtd2ViaG9vay1zZWNyZXQtMzI=" // 30 bytes

// The delivery log lists the events that real publishes (accepted and refused) queued,
// with the endpoints configured, and never the secret.
func TestWebhookDeliveryLog(t *testing.T) {
	e := newEnv(t, "")
	cfg, probs := ingest.ParseWebhooks("webhooks.yaml", []byte("endpoints:\n  - name: ci\n    url: https://hooks.example.com/registry\n    secret_env: S\n    events: [\"*\"]\n"),
		ingest.WebhookSecrets{Getenv: func(string) string { return webhookSecret }})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	w := ingest.NewWebhooks(cfg, e.st, ingest.WebhookOptions{})
	if err := w.Register(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	if r := e.publish(adminToken, "acme-hello-1.1.0.tar.gz", pkg(t, "acme-hello", "1.1.0", strings.Repeat("long ", 1000))); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("invalid publish: %d %s", r.Status, r.Body)
	}
	if _, err := w.RunOnce(context.Background()); err != nil { // seals; the attempts fail (no such host), which is logged
		t.Log(err)
	}
	h := httptest.NewServer(server.New(server.Config{PublicURL: e.srv.URL, AdminSecret: adminToken, Webhooks: cfg}, e.svc, e.st, slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer h.Close()
	get := func(path string, auth bool) response {
		req, _ := http.NewRequest(http.MethodGet, h.URL+path, nil)
		if auth {
			req.Header.Set("Authorization", "Bearer "+adminToken)
		}
		return e.do(req)
	}
	if r := get("/api/v1/admin/webhooks/deliveries", false); r.Status != http.StatusUnauthorized {
		t.Fatalf("without a token: %d", r.Status)
	}
	r := get("/api/v1/admin/webhooks/deliveries?limit=1", true)
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var got struct {
		Enabled   bool `json:"enabled"`
		Endpoints []struct {
			Name, URL string
		} `json:"endpoints"`
		Deliveries []struct {
			Type, Endpoint, Subject, Version, State string
			WebhookID                               string `json:"webhook_id"`
		} `json:"deliveries"`
		NextBefore int64 `json:"next_before"`
	}
	r.json(t, &got)
	if !got.Enabled || len(got.Endpoints) != 1 || got.Endpoints[0].URL != "https://hooks.example.com/registry" {
		t.Fatalf("endpoints: %s", r.Body)
	}
	if len(got.Deliveries) != 1 || got.Deliveries[0].Type != ingest.EventVerificationFailed || got.Deliveries[0].Version != "1.1.0" || got.NextBefore == 0 || got.Deliveries[0].WebhookID == "" {
		t.Fatalf("first page: %s", r.Body)
	}
	r = get("/api/v1/admin/webhooks/deliveries?before="+strconv.FormatInt(got.NextBefore, 10), true)
	r.json(t, &got)
	if len(got.Deliveries) != 1 || got.Deliveries[0].Type != ingest.EventReleasePublished || got.Deliveries[0].Subject != "acme-hello" {
		t.Fatalf("second page: %s", r.Body)
	}
	if strings.Contains(string(r.Body), "c2VydmVy") || strings.Contains(string(r.Body), "whsec") {
		t.Fatalf("the log shows the secret: %s", r.Body)
	}
	for _, bad := range []string{"?state=lost", "?limit=0", "?limit=501", "?limit=1e3", "?before=x", "?before=0", "?before=99999999999999999999"} {
		if r := get("/api/v1/admin/webhooks/deliveries"+bad, true); r.Status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, r.Status)
		}
	}
}

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/store"
)

// loadWebhooks reads and checks --webhooks, naming every problem with its rule, line and
// column; the secrets it points at are read here, and no message shows them.
func (cfg *Config) loadWebhooks() error {
	if cfg.Webhooks == "" {
		return nil
	}
	data, err := os.ReadFile(cfg.Webhooks)
	if err != nil {
		return fmt.Errorf("--webhooks: %v (point it at a webhooks file, or unset it to send none)", err)
	}
	getenv := cfg.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	hooks, probs := ingest.ParseWebhooks(cfg.Webhooks, data, ingest.WebhookSecrets{Getenv: getenv, ReadFile: os.ReadFile})
	if len(probs) > 0 {
		// Capped: a 64 KiB file can hold thousands of problems; every rule is still named.
		listed := probs.Cap(problem.MaxListed)
		msgs := make([]string, 0, len(listed))
		for _, p := range listed {
			msgs = append(msgs, "  "+p.String())
		}
		return fmt.Errorf("--webhooks %s: %d problem(s) (see docs/webhooks.md):\n%s", cfg.Webhooks, len(probs), strings.Join(msgs, "\n"))
	}
	cfg.webhooks = hooks
	return nil
}

// startWebhooks registers the configured endpoints (none without --webhooks: the outbox
// then records nothing) and starts their delivery worker; the returned stop waits for it.
func startWebhooks(ctx context.Context, cfg Config, st *store.Store, log *slog.Logger) (stop func(), err error) {
	if cfg.webhooks == nil {
		if err := st.SetWebhookEndpoints(ctx, nil); err != nil {
			return nil, err
		}
		return func() {}, nil
	}
	w := ingest.NewWebhooks(cfg.webhooks, st, ingest.WebhookOptions{Registry: cfg.PublicURL, Log: log})
	if err := w.Register(ctx); err != nil {
		return nil, err
	}
	w.Start(ctx)
	log.Info("webhooks: delivering", "endpoints", strings.Join(cfg.webhooks.Names(), ","))
	return func() { _ = w.Close() }, nil
}

// Command webhook-receiver is an example endpoint for the registry's signed webhooks: it
// verifies each request (webhook.Verifier) and prints the event. Run it with the secret
// the registry's webhooks.yaml points at:
//
//	WEBHOOK_SECRET=whsec_... go run ./examples/webhook-receiver -addr 127.0.0.1:9000
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/pluginyard/registry/examples/webhook-receiver/webhook"
)

// maxBody bounds one request body; the registry's events are a few KiB at most.
const maxBody = 1 << 20

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv("WEBHOOK_SECRET"), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "webhook-receiver:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, secret string, out io.Writer) error {
	fs := flag.NewFlagSet("webhook-receiver", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:9000", "listen address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	v, err := webhook.NewVerifier(secret, nil)
	if err != nil {
		return fmt.Errorf("WEBHOOK_SECRET: %w", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: Handler(v, out), ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Handler verifies each POST and prints its event type and data as one line to out.
func Handler(v *webhook.Verifier, out io.Writer) http.Handler {
	log := slog.New(slog.NewTextHandler(out, nil))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		switch err := v.Verify(r.Header, body); {
		case errors.Is(err, webhook.ErrReplay):
			w.WriteHeader(http.StatusOK) // handled already: acknowledge, do not act again
			return
		case errors.Is(err, webhook.ErrBusy):
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		case err != nil:
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var ev struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(body, &ev); err != nil {
			v.Forget(r.Header.Get("webhook-id")) // not handled: a retry may be
			http.Error(w, "not a JSON event", http.StatusBadRequest)
			return
		}
		log.Info("event", "id", r.Header.Get("webhook-id"), "type", ev.Type, "data", string(ev.Data))
		w.WriteHeader(http.StatusNoContent)
	})
}

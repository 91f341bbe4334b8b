package ingest

// Webhooks are delivered in the Standard Webhooks format (https://www.standardwebhooks.com)
// rather than as CloudEvents. Both carry a JSON event with an id, a type and a time; what
// decides is the signature: Standard Webhooks fixes one (webhook-id, webhook-timestamp and
// webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">, with the timestamp
// inside the signed bytes so a receiver can refuse replays), with libraries in a dozen
// languages that verify it, whereas CloudEvents' HTTP binding leaves authentication to the
// transport, so every receiver would need our own scheme documented and reimplemented.
// The raw-shared-secret header that Artifact Hub once sent is exactly what a signature
// replaces. A receiver that wants CloudEvents can map type/timestamp/data one to one.

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pluginyard/registry/store"
)

// WebhookStore is the outbox (store.Store implements it).
type WebhookStore interface {
	SetWebhookEndpoints(ctx context.Context, names []string) error
	SealWebhookEvents(ctx context.Context, now time.Time, limit int, seal func(store.WebhookEvent) (store.WebhookSeal, error)) (int, error)
	ClaimWebhookDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]store.WebhookDelivery, error)
	NextWebhookDue(ctx context.Context) (time.Time, bool, error)
	RecordWebhookAttempt(ctx context.Context, id int64, a store.WebhookAttempt) error
	PruneWebhooks(ctx context.Context, before time.Time) (int64, error)
}

// WebhookOptions tune a Webhooks worker; zero values take the defaults.
type WebhookOptions struct {
	// Registry is this registry's public URL, named in every event's data.
	Registry string
	Log      *slog.Logger
	// Now is the clock; Jitter spreads a backoff delay d (default: uniform in [d/2, d)).
	Now    func() time.Time
	Jitter func(d time.Duration) time.Duration
	// BaseBackoff is the wait after the first failed attempt, doubled after each further
	// one up to MaxBackoff (defaults 5 s and 1 h).
	BaseBackoff, MaxBackoff time.Duration
	// Poll is how often the outbox is checked for new events (default 2 s).
	Poll time.Duration
	// Retention is how long delivered and dead deliveries stay in the log (default 30 days).
	Retention time.Duration
	// Parallel bounds the deliveries in flight at once (default 8).
	Parallel int
}

// Webhooks delivers the outbox's events to the configured endpoints: at least once, each
// endpoint receiving a package's events in commit order, retried with exponential backoff
// and jitter, dead-lettered after MaxAttempts.
type Webhooks struct {
	cfg     *WebhookConfig
	st      WebhookStore
	opt     WebhookOptions
	log     *slog.Logger
	clients map[bool]*http.Client // by AllowPrivate

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// Batch sizes of one pass.
const (
	webhookSealBatch = 200
	webhookDueBatch  = 100
	// webhookAnswerCap is how much of a receiver's answer is read (then discarded): enough
	// to reuse the connection after a short answer, never a large one.
	webhookAnswerCap = 4 << 10
	webhookUserAgent = "pluginyard-registry-webhooks/1"
)

// NewWebhooks returns a worker for cfg over st; call Register, then Start.
func NewWebhooks(cfg *WebhookConfig, st WebhookStore, opt WebhookOptions) *Webhooks {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Jitter == nil {
		opt.Jitter = func(d time.Duration) time.Duration { return d/2 + mrand.N(d/2+1) }
	}
	opt.BaseBackoff = cmp.Or(opt.BaseBackoff, 5*time.Second)
	opt.MaxBackoff = cmp.Or(opt.MaxBackoff, time.Hour)
	opt.Poll = cmp.Or(opt.Poll, 2*time.Second)
	opt.Retention = cmp.Or(opt.Retention, 30*24*time.Hour)
	opt.Parallel = cmp.Or(opt.Parallel, 8)
	w := &Webhooks{cfg: cfg, st: st, opt: opt, log: opt.Log}
	w.clients = map[bool]*http.Client{false: w.client(false), true: w.client(true)}
	return w
}

// Register makes the store's registered endpoints those of the configuration: events are
// recorded from now on for a new endpoint, a removed one's pending deliveries die.
func (w *Webhooks) Register(ctx context.Context) error {
	return w.st.SetWebhookEndpoints(ctx, w.cfg.Names())
}

// Start runs the delivery loop in the background until Close.
func (w *Webhooks) Start(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done != nil {
		return
	}
	ctx, w.cancel = context.WithCancel(context.WithoutCancel(ctx))
	w.done = make(chan struct{})
	go w.loop(ctx, w.done)
}

// Close stops the loop and waits for it: an attempt in flight is cancelled and not
// counted, so it is sent again after a restart (at least once).
func (w *Webhooks) Close() error {
	w.mu.Lock()
	cancel, done := w.cancel, w.done
	w.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	<-done
	return nil
}

func (w *Webhooks) loop(ctx context.Context, done chan struct{}) {
	defer close(done)
	lastPrune := time.Time{}
	for {
		_, err := w.RunOnce(ctx)
		if err != nil && ctx.Err() == nil {
			w.log.Error("webhooks: delivery pass failed; retrying", "err", err, "retry_in", w.opt.Poll.String())
		}
		if now := w.opt.Now(); now.Sub(lastPrune) > time.Hour {
			lastPrune = now
			w.prune(ctx, now)
		}
		wait := w.opt.Poll // after a failed pass (the store), not at once again
		if err == nil {
			wait = w.wait(ctx)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// wait is how long the loop sleeps: until the next retry is due, at most Poll (new events
// are only seen by polling: the triggers that write them cannot wake the worker).
func (w *Webhooks) wait(ctx context.Context) time.Duration {
	at, ok, err := w.st.NextWebhookDue(ctx)
	if err != nil || !ok {
		return w.opt.Poll
	}
	return min(max(at.Sub(w.opt.Now()), 10*time.Millisecond), w.opt.Poll)
}

func (w *Webhooks) prune(ctx context.Context, now time.Time) {
	n, err := w.st.PruneWebhooks(ctx, now.Add(-w.opt.Retention))
	if err != nil && ctx.Err() == nil {
		w.log.Error("webhooks: prune the delivery log", "err", err)
	} else if n > 0 {
		w.log.Info("webhooks: pruned the delivery log", "events", n, "older_than", w.opt.Retention.String())
	}
}

// RunOnce seals the new events, then attempts every delivery due now once; it returns how
// many attempts it made. The loop calls it; tests drive it with their own clock.
func (w *Webhooks) RunOnce(ctx context.Context) (int, error) {
	for {
		n, err := w.st.SealWebhookEvents(ctx, w.opt.Now(), webhookSealBatch, w.seal)
		if err != nil {
			return 0, err
		}
		if n < webhookSealBatch {
			break
		}
	}
	// Claimed, not just read: a claim postpones each delivery past this attempt, so that
	// another replica's worker never sends the same one while this one does.
	due, err := w.st.ClaimWebhookDeliveries(ctx, w.opt.Now(), w.cfg.Timeout+time.Minute, webhookDueBatch)
	if err != nil {
		return 0, err
	}
	sem := make(chan struct{}, w.opt.Parallel)
	var (
		wg   sync.WaitGroup
		errs = make([]error, len(due))
	)
	for i, d := range due {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = w.deliver(ctx, d)
		}()
	}
	wg.Wait()
	return len(due), errors.Join(errs...)
}

// deliver makes one attempt and records it; an attempt cut short by Close is not recorded.
func (w *Webhooks) deliver(ctx context.Context, d store.WebhookDelivery) error {
	ep, ok := w.cfg.Endpoint(d.Endpoint)
	if !ok {
		return nil // removed from the configuration: Register dead-letters it
	}
	status, err := w.send(ctx, ep, d)
	if ctx.Err() != nil {
		return nil
	}
	a := w.outcome(d, status, err)
	if err := w.st.RecordWebhookAttempt(context.WithoutCancel(ctx), d.ID, a); err != nil {
		return err
	}
	w.logAttempt(d, a)
	return nil
}

func (w *Webhooks) logAttempt(d store.WebhookDelivery, a store.WebhookAttempt) {
	attrs := []any{"endpoint", d.Endpoint, "type", d.Type, "subject", d.Subject, "webhook_id", d.MsgID, "attempt", d.Attempts + 1, "status", a.Status}
	switch a.State {
	case store.WebhookDelivered:
		w.log.Debug("webhook delivered", attrs...)
	case store.WebhookDead:
		w.log.Error("webhook dead-lettered: attempts exhausted", append(attrs, "err", a.Error)...)
	default:
		w.log.Warn("webhook attempt failed; will retry", append(attrs, "err", a.Error, "next_attempt_at", a.NextAt)...)
	}
}

// httpStatusError is a non-2xx answer; retryAfter is its Retry-After, when it gave one.
type httpStatusError struct {
	status     int
	retryAfter time.Duration
}

func (e *httpStatusError) Error() string {
	return fmt.Sprintf("the receiver answered %d %s; a 2xx answer acknowledges an event", e.status, http.StatusText(e.status))
}

// outcome turns one attempt into the delivery's next state.
func (w *Webhooks) outcome(d store.WebhookDelivery, status int, err error) store.WebhookAttempt {
	now := w.opt.Now()
	if err == nil {
		return store.WebhookAttempt{Status: status, State: store.WebhookDelivered, NextAt: now}
	}
	a := store.WebhookAttempt{Status: status, Error: err.Error(), State: store.WebhookPending}
	tried := d.Attempts + 1
	if tried >= w.cfg.MaxAttempts {
		a.State, a.NextAt = store.WebhookDead, now
		a.Error = fmt.Sprintf("dead after %d attempts (max_attempts): %s", tried, a.Error)
		return a
	}
	delay := w.opt.Jitter(w.backoff(tried))
	var se *httpStatusError
	if errors.As(err, &se) && se.retryAfter > delay {
		delay = min(se.retryAfter, w.opt.MaxBackoff)
	}
	a.NextAt = now.Add(delay)
	return a
}

// backoff is the wait after the tried-th failed attempt: BaseBackoff doubled per attempt,
// at most MaxBackoff.
func (w *Webhooks) backoff(tried int) time.Duration {
	d := w.opt.BaseBackoff
	for i := 1; i < tried && d < w.opt.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, w.opt.MaxBackoff)
}

// send POSTs the delivery's body, signed, and returns the status answered.
func (w *Webhooks) send(ctx context.Context, ep *WebhookEndpoint, d store.WebhookDelivery) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(d.Body))
	if err != nil {
		return 0, fmt.Errorf("webhooks: request: %w", err)
	}
	ts := w.opt.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", webhookUserAgent)
	req.Header.Set("webhook-id", d.MsgID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", signWebhook(ep.key, d.MsgID, ts, d.Body))
	resp, err := w.clients[ep.AllowPrivate].Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, webhookAnswerCap))
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, &httpStatusError{status: resp.StatusCode, retryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	}
	return resp.StatusCode, nil
}

// retryAfter reads a Retry-After of whole seconds (0 when absent or not a count). The
// count is capped before it is multiplied: a huge one would overflow a Duration and wrap
// to a short wait; outcome caps the wait at MaxBackoff.
func retryAfter(v string) time.Duration {
	s, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0
	}
	return time.Duration(min(s, uint64(math.MaxInt64/time.Second))) * time.Second
}

// signWebhook is the Standard Webhooks v1 signature: base64 HMAC-SHA256 of "id.ts.body".
func signWebhook(key []byte, id string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// webhookPayload is the body of every event (Standard Webhooks' type/timestamp/data).
type webhookPayload struct {
	Type      string         `json:"type"`
	Timestamp string         `json:"timestamp"`
	Data      map[string]any `json:"data"`
}

// seal gives an event its message id and body, and picks the endpoints that take it. The
// body is built once, so every attempt sends the same bytes.
func (w *Webhooks) seal(ev store.WebhookEvent) (store.WebhookSeal, error) {
	data := map[string]any{}
	if err := json.Unmarshal(ev.Detail, &data); err != nil {
		return store.WebhookSeal{}, fmt.Errorf("event detail: %w", err)
	}
	flattenRefusal(data)
	data["registry"] = w.opt.Registry
	if ev.Type != EventSyncFailed {
		data["package"] = ev.Subject
		if ev.Version != "" {
			data["version"] = ev.Version
		}
	}
	body, err := json.Marshal(webhookPayload{Type: ev.Type, Timestamp: ev.OccurredAt.UTC().Format(time.RFC3339), Data: data})
	if err != nil {
		return store.WebhookSeal{}, fmt.Errorf("event body: %w", err)
	}
	sl := store.WebhookSeal{MsgID: "msg_" + rand.Text(), Body: body}
	for _, ep := range w.cfg.Endpoints {
		if ep.Wants(ev.Type) {
			sl.Endpoints = append(sl.Endpoints, ep.Name)
		}
	}
	return sl, nil
}

// flattenRefusal lifts a refused publish's audit detail (reason, rules) into the data.
func flattenRefusal(data map[string]any) {
	r, ok := data["refusal"].(map[string]any)
	if !ok {
		return
	}
	delete(data, "refusal")
	for _, k := range []string{"reason", "rules"} {
		if v, ok := r[k]; ok {
			data[k] = v
		}
	}
}

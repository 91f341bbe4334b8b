package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The states of a webhook delivery.
const (
	WebhookPending   = "pending"   // waiting for its turn or its next attempt
	WebhookDelivered = "delivered" // the endpoint answered 2xx
	WebhookDead      = "dead"      // given up: attempts exhausted, or the endpoint was removed
)

// WebhookEvent is one event of the outbox (migration 0018): written by a trigger in the
// transaction of the change it reports.
type WebhookEvent struct {
	ID         int64
	Type       string // release.published, release.yanked, …
	Subject    string // the package id; the repository for sync.failed
	Version    string // the release, where the event names one
	Detail     json.RawMessage
	OccurredAt time.Time
}

// WebhookDelivery is one event's delivery to one endpoint, as the delivery log shows it.
type WebhookDelivery struct {
	ID         int64     `json:"id"`
	EventID    int64     `json:"event_id"`
	MsgID      string    `json:"webhook_id"`
	Type       string    `json:"type"`
	Endpoint   string    `json:"endpoint"`
	Subject    string    `json:"subject"`
	Version    string    `json:"version,omitempty"`
	State      string    `json:"state"`
	Attempts   int       `json:"attempts"`
	NextAt     time.Time `json:"next_attempt_at"`
	LastStatus int       `json:"last_status,omitempty"`
	LastError  string    `json:"last_error,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	// Body is the signed JSON payload (not shown in the log: it can be large).
	Body []byte `json:"-"`
}

// WebhookSeal is what the worker decides for an event when it fans it out: the message id
// and body every attempt sends, and the endpoints whose filter takes it.
type WebhookSeal struct {
	MsgID     string
	Body      []byte
	Endpoints []string
}

// maxWebhookError bounds the last error kept per delivery (the column's CHECK).
const maxWebhookError = 1024

// SetWebhookEndpoints makes the registered endpoints exactly names: a new one starts after
// the last event recorded so far (it is not sent the history), one no longer named is
// forgotten and its pending deliveries die; each change is audited. With no names, no
// events are recorded at all.
func (s *Store) SetWebhookEndpoints(ctx context.Context, names []string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		known, err := registeredEndpoints(ctx, tx)
		if err != nil {
			return err
		}
		want := map[string]bool{}
		for _, n := range names {
			want[n] = true
			if _, ok := known[n]; ok {
				continue
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_endpoints (name, since_event, added_at)
				VALUES (?, (SELECT coalesce(max(id), 0) FROM webhook_events), ?)`, n, s.stamp()); err != nil {
				return fmt.Errorf("store: register webhook endpoint %s: %w", n, err)
			}
			if err := s.insertAudit(ctx, tx, AuditEntry{Actor: webhookActor, Action: "webhook add", Target: n}); err != nil {
				return err
			}
		}
		for n := range known {
			if !want[n] {
				if err := s.forgetEndpoint(ctx, tx, n); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func (s *Store) forgetEndpoint(ctx context.Context, tx *sql.Tx, name string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET state = 'dead', last_error = ?, updated_at = ?
		WHERE endpoint = ? AND state = 'pending'`, "the endpoint was removed from the webhooks configuration", s.stamp(), name); err != nil {
		return fmt.Errorf("store: forget webhook endpoint %s: %w", name, err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM webhook_endpoints WHERE name = ?", name); err != nil {
		return fmt.Errorf("store: forget webhook endpoint %s: %w", name, err)
	}
	return s.insertAudit(ctx, tx, AuditEntry{Actor: webhookActor, Action: "webhook remove", Target: name})
}

// webhookActor audits the endpoint changes read from the webhooks file at start.
const webhookActor = "webhooks.yaml"

// registeredEndpoints maps each registered endpoint to its since_event.
func registeredEndpoints(ctx context.Context, tx *sql.Tx) (map[string]int64, error) {
	rows, err := tx.QueryContext(ctx, "SELECT name, since_event FROM webhook_endpoints")
	if err != nil {
		return nil, fmt.Errorf("store: webhook endpoints: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var (
			n     string
			since int64
		)
		if err := rows.Scan(&n, &since); err != nil {
			return nil, fmt.Errorf("store: webhook endpoints: %w", err)
		}
		out[n] = since
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: webhook endpoints: %w", err)
	}
	return out, nil
}

// SealWebhookEvents fans out at most limit unsealed events, oldest first, in one
// transaction: seal gives each its id, body and endpoints, and one pending delivery per
// registered endpoint (that was registered before the event) is queued, due at now. It
// returns how many events it sealed.
func (s *Store) SealWebhookEvents(ctx context.Context, now time.Time, limit int, seal func(WebhookEvent) (WebhookSeal, error)) (int, error) {
	n := 0
	err := s.tx(ctx, func(tx *sql.Tx) error {
		n = 0
		events, err := unsealedEvents(ctx, tx, limit)
		if err != nil {
			return err
		}
		known, err := registeredEndpoints(ctx, tx)
		if err != nil {
			return err
		}
		for _, ev := range events {
			sl, err := seal(ev)
			if err != nil {
				return fmt.Errorf("store: seal webhook event %d: %w", ev.ID, err)
			}
			if err := s.sealEvent(ctx, tx, ev, sl, known, now); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

func unsealedEvents(ctx context.Context, tx *sql.Tx, limit int) ([]WebhookEvent, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, type, subject, version, detail, occurred_at FROM webhook_events
		WHERE msg_id IS NULL ORDER BY id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("store: unsealed webhook events: %w", err)
	}
	defer rows.Close()
	var out []WebhookEvent
	for rows.Next() {
		var (
			ev     WebhookEvent
			detail string
			at     string
		)
		if err := rows.Scan(&ev.ID, &ev.Type, &ev.Subject, &ev.Version, &detail, &at); err != nil {
			return nil, fmt.Errorf("store: unsealed webhook events: %w", err)
		}
		ev.Detail, ev.OccurredAt = json.RawMessage(detail), parseStamp(at)
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: unsealed webhook events: %w", err)
	}
	return out, nil
}

func (s *Store) sealEvent(ctx context.Context, tx *sql.Tx, ev WebhookEvent, sl WebhookSeal, known map[string]int64, now time.Time) error {
	if _, err := tx.ExecContext(ctx, "UPDATE webhook_events SET msg_id = ?, body = ? WHERE id = ?", sl.MsgID, sl.Body, ev.ID); err != nil {
		return fmt.Errorf("store: seal webhook event %d: %w", ev.ID, err)
	}
	stamp := s.stamp()
	for _, name := range sl.Endpoints {
		since, ok := known[name]
		if !ok || since >= ev.ID {
			continue // not registered, or registered after this event happened
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (event_id, endpoint, subject, next_at, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?)`, ev.ID, name, ev.Subject, now.UnixMilli(), stamp, stamp); err != nil {
			return fmt.Errorf("store: queue webhook event %d for %s: %w", ev.ID, name, err)
		}
	}
	return nil
}

// deliveryColumns are a delivery's columns but its body: DueWebhookDeliveries adds e.body
// (the worker sends it), the delivery log NULL (it never shows it, and a page of 500 bodies
// would be read for nothing).
const deliveryColumns = `d.id, d.event_id, e.msg_id, e.type, d.endpoint, d.subject, e.version, d.state, d.attempts,
	d.next_at, d.last_status, d.last_error, d.created_at, d.updated_at`

// DueWebhookDeliveries returns at most limit deliveries that may be attempted at now: the
// head (lowest id) of each endpoint's pending queue of a subject, when it is due. A later
// event of the same package waits until the head is delivered or dead, so each endpoint
// sees a package's events in the order they were committed.
func (s *Store) DueWebhookDeliveries(ctx context.Context, now time.Time, limit int) ([]WebhookDelivery, error) {
	return s.queryDeliveries(ctx, dueHeads, now.UnixMilli(), limit)
}

// queueHead is the condition that the pending delivery d heads its endpoint's queue of
// its subject (has the lowest id of it).
const queueHead = `d.state = 'pending'
		AND d.id = (SELECT min(p.id) FROM webhook_deliveries p WHERE p.state = 'pending' AND p.endpoint = d.endpoint AND p.subject = d.subject)`

// dueHeads is the query of the due queue heads (see DueWebhookDeliveries), with the
// arguments now (Unix milliseconds) and a limit.
const dueHeads = `SELECT ` + deliveryColumns + `, e.body FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
		WHERE ` + queueHead + ` AND d.next_at <= ?
		ORDER BY d.next_at, d.id LIMIT ?`

// ClaimWebhookDeliveries is DueWebhookDeliveries for the worker that will attempt them:
// in one write transaction it takes the due queue heads and postpones each to now+lease,
// so that no other worker (another replica's) takes it while this one attempts it;
// RecordWebhookAttempt then sets the attempt's outcome. A worker that dies mid-attempt
// leaves its claims to expire: the delivery is attempted again after lease, never by two
// workers at once. On PostgreSQL the heads are also locked FOR UPDATE SKIP LOCKED: a
// replica's claim skips the rows another's is claiming rather than waiting to take them
// twice.
func (s *Store) ClaimWebhookDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]WebhookDelivery, error) {
	query := dueHeads
	if s.dialect == Postgres {
		query += " FOR UPDATE OF d SKIP LOCKED"
	}
	var out []WebhookDelivery
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if out, err = scanDeliveries(tx.QueryContext(ctx, query, now.UnixMilli(), limit)); err != nil {
			return err
		}
		until := now.Add(lease).UnixMilli()
		for i, d := range out {
			if _, err := tx.ExecContext(ctx, "UPDATE webhook_deliveries SET next_at = ? WHERE id = ?", until, d.ID); err != nil {
				return fmt.Errorf("store: claim webhook delivery %d: %w", d.ID, err)
			}
			out[i].NextAt = time.UnixMilli(until).UTC()
		}
		return nil
	})
	return out, err
}

// NextWebhookDue returns when the earliest pending queue head is due; ok is false when
// nothing is pending.
func (s *Store) NextWebhookDue(ctx context.Context) (at time.Time, ok bool, err error) {
	var ms sql.NullInt64
	err = s.r.QueryRowContext(ctx, `SELECT min(d.next_at) FROM webhook_deliveries d WHERE `+queueHead).Scan(&ms)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: next webhook due: %w", err)
	}
	if !ms.Valid {
		return time.Time{}, false, nil
	}
	return time.UnixMilli(ms.Int64).UTC(), true, nil
}

// WebhookAttempt is the outcome of one delivery attempt.
type WebhookAttempt struct {
	Status int    // the HTTP status answered; 0 when there was no answer
	Error  string // why it failed; "" when delivered
	State  string // the delivery's state after it
	NextAt time.Time
}

// RecordWebhookAttempt counts one attempt of a pending delivery and sets its outcome.
func (s *Store) RecordWebhookAttempt(ctx context.Context, id int64, a WebhookAttempt) error {
	msg := a.Error
	if len(msg) > maxWebhookError {
		msg = strings.ToValidUTF8(msg[:maxWebhookError-3], "") + "..."
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET attempts = attempts + 1, state = ?, next_at = ?,
			last_status = ?, last_error = ?, updated_at = ? WHERE id = ? AND state = 'pending'`,
			a.State, a.NextAt.UnixMilli(), a.Status, msg, s.stamp(), id)
		if err != nil {
			return fmt.Errorf("store: webhook delivery %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("store: webhook delivery %d: %w", id, ErrNotFound)
		}
		return nil
	})
}

// WebhookDeliveryQuery selects deliveries of the log: newest first, at most Limit, with
// ids below Before (0: the newest), of one Endpoint and State when set.
type WebhookDeliveryQuery struct {
	Endpoint string
	State    string
	Before   int64
	Limit    int
}

// WebhookDeliveries returns a page of the delivery log, without the bodies.
func (s *Store) WebhookDeliveries(ctx context.Context, q WebhookDeliveryQuery) ([]WebhookDelivery, error) {
	where, args := []string{"1 = 1"}, []any{}
	if q.Before > 0 {
		where, args = append(where, "d.id < ?"), append(args, q.Before)
	}
	if q.Endpoint != "" {
		where, args = append(where, "d.endpoint = ?"), append(args, q.Endpoint)
	}
	if q.State != "" {
		where, args = append(where, "d.state = ?"), append(args, q.State)
	}
	args = append(args, q.Limit)
	return s.queryDeliveries(ctx, `SELECT `+deliveryColumns+`, NULL FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
		WHERE `+strings.Join(where, " AND ")+` ORDER BY d.id DESC LIMIT ?`, args...)
}

func (s *Store) queryDeliveries(ctx context.Context, query string, args ...any) ([]WebhookDelivery, error) {
	return scanDeliveries(s.r.QueryContext(ctx, query, args...))
}

// scanDeliveries reads the deliveries of a query of deliveryColumns and a body.
func scanDeliveries(rows *sql.Rows, err error) ([]WebhookDelivery, error) {
	if err != nil {
		return nil, fmt.Errorf("store: webhook deliveries: %w", err)
	}
	defer rows.Close()
	out := []WebhookDelivery{}
	for rows.Next() {
		var (
			d                WebhookDelivery
			next             int64
			created, updated string
		)
		if err := rows.Scan(&d.ID, &d.EventID, &d.MsgID, &d.Type, &d.Endpoint, &d.Subject, &d.Version, &d.State, &d.Attempts,
			&next, &d.LastStatus, &d.LastError, &created, &updated, &d.Body); err != nil {
			return nil, fmt.Errorf("store: webhook deliveries: %w", err)
		}
		d.NextAt, d.CreatedAt, d.UpdatedAt = time.UnixMilli(next).UTC(), parseStamp(created), parseStamp(updated)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: webhook deliveries: %w", err)
	}
	return out, nil
}

// PruneWebhooks deletes the sealed events older than before whose deliveries are all
// delivered or dead (their deliveries go with them), and returns how many it deleted.
func (s *Store) PruneWebhooks(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_events WHERE msg_id IS NOT NULL AND occurred_at < ?
			AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id AND (d.state = 'pending' OR d.updated_at >= ?))`,
			before.UTC().Format(time.RFC3339), before.UTC().Format(time.RFC3339))
		if err != nil {
			return fmt.Errorf("store: prune webhooks: %w", err)
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n, err
}

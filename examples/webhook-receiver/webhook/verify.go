// Package webhook verifies the registry's webhook requests (Standard Webhooks,
// https://www.standardwebhooks.com): the HMAC-SHA256 signature over id, timestamp and
// body, a timestamp within Tolerance of the receiver's clock, and an id not seen before.
// Copy it into a receiver, or use any Standard Webhooks library: the format is the same.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Tolerance is how far a request's timestamp may be from the receiver's clock, either way.
const Tolerance = 5 * time.Minute

// maxSeen bounds the ids remembered: past it, new requests are refused (and retried by the
// registry later) rather than letting memory grow without bound.
const maxSeen = 100_000

// Errors Verify returns; a receiver answers ErrReplay with a 2xx (the message was already
// handled; a 4xx would only make the registry retry it) and the others with a 4xx.
var (
	ErrHeaders   = errors.New("webhook: missing or malformed webhook-id, webhook-timestamp or webhook-signature header")
	ErrSignature = errors.New("webhook: no signature matches")
	ErrSkew      = errors.New("webhook: timestamp too far from this clock")
	ErrReplay    = errors.New("webhook: message id already received")
	ErrBusy      = errors.New("webhook: too many recent message ids remembered")
)

// Verifier checks requests signed with one secret. It is safe for concurrent use.
type Verifier struct {
	key []byte
	now func() time.Time

	mu     sync.Mutex
	seen   map[string]time.Time // message id → when it may be forgotten
	pruned time.Time
}

// NewVerifier returns a Verifier for secret ("whsec_" followed by base64, as configured
// on the registry); now is the clock (nil: time.Now).
func NewVerifier(secret string, now func() time.Time) (*Verifier, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return nil, fmt.Errorf("webhook: the secret is not whsec_ followed by base64: %v", err)
	}
	if now == nil {
		now = time.Now
	}
	return &Verifier{key: key, now: now, seen: map[string]time.Time{}}, nil
}

// Sign returns the v1 signature of a message: base64 HMAC-SHA256 of "id.timestamp.body".
func Sign(key []byte, id string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", id, timestamp)
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Verify checks one request's headers and body, and remembers its id: the same id again
// is ErrReplay. The order matters: only a correctly signed request can mark an id as
// seen, so a forger cannot block one. A receiver that then fails to handle the event
// calls Forget, so that the registry's retry (same id, new timestamp) is accepted.
func (v *Verifier) Verify(h http.Header, body []byte) error {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || sigs == "" || err != nil {
		return ErrHeaders
	}
	if !v.signed(id, sec, body, sigs) {
		return ErrSignature
	}
	now := v.now()
	at := time.Unix(sec, 0)
	if at.Before(now.Add(-Tolerance)) || at.After(now.Add(Tolerance)) {
		return fmt.Errorf("%w: %s is %s from %s, more than %s", ErrSkew, at.UTC().Format(time.RFC3339),
			at.Sub(now).Round(time.Second), now.UTC().Format(time.RFC3339), Tolerance)
	}
	return v.remember(id, now)
}

// signed reports whether any of the space-separated signatures (several during a secret
// rotation) is the v1 signature of the message.
func (v *Verifier) signed(id string, ts int64, body []byte, sigs string) bool {
	want := Sign(v.key, id, ts, body)
	for _, s := range strings.Fields(sigs) {
		if hmac.Equal([]byte(s), []byte(want)) {
			return true
		}
	}
	return false
}

// remember records id for twice Tolerance: a captured request replayed later carries its
// old timestamp, which the skew check then refuses. (The registry's own retries of an id
// carry new timestamps: at-least-once delivery means a receiver acts idempotently on ids.)
func (v *Verifier) remember(id string, now time.Time) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if now.Sub(v.pruned) > time.Second || len(v.seen) >= maxSeen {
		for k, until := range v.seen {
			if now.After(until) {
				delete(v.seen, k)
			}
		}
		v.pruned = now
	}
	if _, dup := v.seen[id]; dup {
		return ErrReplay
	}
	if len(v.seen) >= maxSeen {
		return ErrBusy
	}
	v.seen[id] = now.Add(2 * Tolerance)
	return nil
}

// Forget drops id from the ids seen: the receiver did not handle it after all.
func (v *Verifier) Forget(id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.seen, id)
}

package ingest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/examples/webhook-receiver/webhook"
	"github.com/pluginyard/registry/store"
)

const testWebhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYqr" // 33 bytes of key

// fakeClock is the one clock of a test: the worker's and the receiver's.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration)     { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }
func newFakeClock() *fakeClock               { return &fakeClock{t: time.Unix(1_800_000_000, 0)} }
func noJitter(d time.Duration) time.Duration { return d }

// received is one request the receiver verified.
type received struct {
	ID, Timestamp string
	Event         webhookPayload
	Body          []byte
	Header        http.Header
}

// receiver is an httptest endpoint that verifies every request with the example's
// webhook.Verifier and answers what answer says (200 by default).
type receiver struct {
	*httptest.Server
	v      *webhook.Verifier
	mu     sync.Mutex
	got    []received // verified requests, in arrival order
	errs   []error    // requests Verify refused
	answer func(n int, r received) int
}

func newReceiver(t *testing.T, clock *fakeClock) *receiver {
	t.Helper()
	v, err := webhook.NewVerifier(testWebhookSecret, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	rc := &receiver{v: v}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err := rc.v.Verify(r.Header, body); err != nil {
		rc.errs = append(rc.errs, err)
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	got := received{ID: r.Header.Get("webhook-id"), Timestamp: r.Header.Get("webhook-timestamp"), Body: body, Header: r.Header.Clone()}
	if err := json.Unmarshal(body, &got.Event); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.got = append(rc.got, got)
	status := http.StatusNoContent
	if rc.answer != nil {
		status = rc.answer(len(rc.got), got)
	}
	if status/100 != 2 {
		rc.v.Forget(got.ID) // not handled: the retry must be accepted
	}
	w.WriteHeader(status)
}

func (rc *receiver) received() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// mustWebhookConfig parses a webhooks file whose endpoints share the test secret.
func mustWebhookConfig(t *testing.T, yaml string) *WebhookConfig {
	t.Helper()
	cfg, probs := ParseWebhooks("webhooks.yaml", []byte(yaml), WebhookSecrets{
		Getenv:   func(string) string { return testWebhookSecret },
		ReadFile: os.ReadFile,
	})
	if len(probs) > 0 {
		t.Fatalf("webhooks.yaml: %v", probs)
	}
	return cfg
}

func oneEndpoint(url, extra string) string {
	return "endpoints:\n  - name: ci\n    url: " + url + "\n    secret_env: HOOK_SECRET\n    events: [\"*\"]\n    allow_private: true\n" + extra
}

// newWebhooks registers cfg's endpoints on st and returns a worker on clock.
func newWebhooks(t *testing.T, st *store.Store, cfg *WebhookConfig, clock *fakeClock) *Webhooks {
	t.Helper()
	w := NewWebhooks(cfg, st, WebhookOptions{Registry: "http://r.example", Now: clock.Now, Jitter: noJitter, Log: discard()})
	if err := w.Register(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

func mustRunOnce(t *testing.T, w *Webhooks) int {
	t.Helper()
	n, err := w.RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func deliveries(t *testing.T, st *store.Store) []store.WebhookDelivery {
	t.Helper()
	d, err := st.WebhookDeliveries(context.Background(), store.WebhookDeliveryQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// auditRefusal records a refused publish of id@version: a verification.failed event.
func auditRefusal(t *testing.T, st *store.Store, id, version string) {
	t.Helper()
	if err := st.Audit(context.Background(), store.AuditEntry{Actor: "ci", Action: "publish", Target: id + "@" + version, Outcome: "refused",
		Detail: map[string]any{"reason": "bad", "rules": []string{"manifest.id"}}}); err != nil {
		t.Fatal(err)
	}
}

// A real publish and a real refused publish reach the receiver, signed so that the
// example's Verify accepts them, with the event's facts in the data.
func TestWebhookPublishDeliveredSigned(t *testing.T) {
	clock := newFakeClock()
	rc := newReceiver(t, clock)
	svc := newPublishService(t, publishList(), Config{})
	w := newWebhooks(t, svc.db(), mustWebhookConfig(t, oneEndpoint(rc.URL, "")), clock)
	res := publishOK(t, svc, "acme-hello", "1.0.0", "Says hello")
	bad := plugin(t, "acme-hello", "1.1.0", strings.Repeat("long ", 1000))
	if _, err := svc.Publish(context.Background(), PublishInput{Package: bytes.NewReader(bad), FileName: PackageFileName("acme-hello", "1.1.0"), Actor: anAdmin}); err == nil {
		t.Fatal("a package without a description was accepted")
	}
	if err := svc.Yank(context.Background(), anAdmin, "acme-hello", "1.0.0", true, "broken build"); err != nil {
		t.Fatal(err)
	}
	if err := svc.Deprecate(context.Background(), anAdmin, "acme-hello", "use acme-other", "acme-other"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Quarantine(context.Background(), anAdmin, "acme-hello", "", "ships a credential stealer"); err != nil {
		t.Fatal(err)
	}
	for mustRunOnce(t, w) > 0 {
	}
	got := rc.received()
	var types []string
	for _, r := range got {
		types = append(types, r.Event.Type)
	}
	want := []string{EventReleasePublished, EventVerificationFailed, EventReleaseYanked, EventPackageDeprecated, EventPackageQuarantined}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	pub := got[0].Event.Data
	if pub["package"] != "acme-hello" || pub["version"] != "1.0.0" || pub["sha256"] != res.Release.SHA256 || pub["registry"] != "http://r.example" {
		t.Errorf("release.published data = %v", pub)
	}
	if fail := got[1].Event.Data; fail["version"] != "1.1.0" || !strings.Contains(fmtJSON(fail["rules"]), "manifest.field.length") {
		t.Errorf("verification.failed data = %v, want version 1.1.0 and rule manifest.field.length", fail)
	}
	if y := got[2].Event.Data; y["reason"] != "broken build" {
		t.Errorf("release.yanked data = %v", y)
	}
	if q := got[4].Event.Data; q["reason"] != "ships a credential stealer" || q["package"] != "acme-hello" {
		t.Errorf("package.quarantined data = %v", q)
	}
	if h := got[0].Header; !strings.HasPrefix(h.Get("webhook-signature"), "v1,") || h.Get("Content-Type") != "application/json" {
		t.Errorf("headers = %v", h)
	}
	for _, d := range deliveries(t, svc.db()) {
		if d.State != store.WebhookDelivered || d.Attempts != 1 || d.LastStatus != http.StatusNoContent {
			t.Errorf("delivery %+v, want delivered in one attempt", d)
		}
	}
}

func fmtJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// A captured request sent again is refused by the receiver as a replay; sent later than
// the tolerance, for its timestamp.
func TestWebhookReceiverRefusesReplayAndSkew(t *testing.T) {
	clock := newFakeClock()
	rc := newReceiver(t, clock)
	st := mustStore(t)
	w := newWebhooks(t, st, mustWebhookConfig(t, oneEndpoint(rc.URL, "")), clock)
	auditRefusal(t, st, "a", "1.0.0")
	mustRunOnce(t, w)
	got := rc.received()
	if len(got) != 1 {
		t.Fatalf("received %d, want 1", len(got))
	}
	replay := func() error {
		req, _ := http.NewRequest(http.MethodPost, rc.URL, bytes.NewReader(got[0].Body))
		req.Header = got[0].Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		rc.mu.Lock()
		defer rc.mu.Unlock()
		return rc.errs[len(rc.errs)-1]
	}
	if err := replay(); !errors.Is(err, webhook.ErrReplay) {
		t.Fatalf("replayed at once: %v, want ErrReplay", err)
	}
	clock.Add(webhook.Tolerance + 2*webhook.Tolerance)
	if err := replay(); !errors.Is(err, webhook.ErrSkew) {
		t.Fatalf("replayed later: %v, want ErrSkew", err)
	}
	if n := len(rc.received()); n != 1 {
		t.Fatalf("the receiver accepted %d requests, want the original only", n)
	}
}

// A failing receiver is retried with exponential backoff (no jitter here: 5 s, 10 s,
// 20 s), each time with the same id and body and a fresh timestamp and signature.
func TestWebhookRetriesWithBackoff(t *testing.T) {
	clock := newFakeClock()
	rc := newReceiver(t, clock)
	rc.answer = func(n int, _ received) int {
		if n <= 3 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}
	st := mustStore(t)
	w := newWebhooks(t, st, mustWebhookConfig(t, oneEndpoint(rc.URL, "")), clock)
	auditRefusal(t, st, "a", "1.0.0")
	start := clock.Now()
	var waits []time.Duration
	for range 4 {
		if n := mustRunOnce(t, w); n != 1 {
			t.Fatalf("attempts at +%s: %d, want 1", clock.Now().Sub(start), n)
		}
		d := deliveries(t, st)[0]
		if d.State != store.WebhookPending {
			break
		}
		waits = append(waits, d.NextAt.Sub(clock.Now()))
		clock.Add(d.NextAt.Sub(clock.Now()) - time.Second)
		if n := mustRunOnce(t, w); n != 0 {
			t.Fatalf("attempted %d a second before the retry was due", n)
		}
		clock.Add(time.Second)
	}
	if diff := cmp.Diff([]time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second}, waits); diff != "" {
		t.Fatalf("backoff (-want +got):\n%s", diff)
	}
	d := deliveries(t, st)[0]
	if d.State != store.WebhookDelivered || d.Attempts != 4 {
		t.Fatalf("delivery = %+v, want delivered at the 4th attempt", d)
	}
	got := rc.received()
	for _, r := range got[1:] {
		if r.ID != got[0].ID || !bytes.Equal(r.Body, got[0].Body) || r.Timestamp == got[0].Timestamp {
			t.Fatalf("a retry changed the id or body, or kept the timestamp: %+v vs %+v", r, got[0])
		}
	}
}

// Jitter spreads each wait within [d/2, d) by default, and Retry-After can lengthen it.
func TestWebhookBackoffJitterAndRetryAfter(t *testing.T) {
	w := NewWebhooks(&WebhookConfig{MaxAttempts: 50, Timeout: time.Second}, nil, WebhookOptions{Now: func() time.Time { return time.Unix(0, 0) }})
	for tried := 1; tried <= 12; tried++ {
		base := w.backoff(tried)
		a := w.outcome(store.WebhookDelivery{Attempts: tried - 1}, 500, errors.New("boom"))
		if wait := a.NextAt.Sub(time.Unix(0, 0)); wait < base/2 || wait > base {
			t.Fatalf("attempt %d waits %s, want within [%s, %s]", tried, wait, base/2, base)
		}
	}
	if got := w.backoff(30); got != time.Hour {
		t.Fatalf("backoff after 30 attempts = %s, want the 1h cap", got)
	}
	a := w.outcome(store.WebhookDelivery{}, 429, &httpStatusError{status: 429, retryAfter: 10 * time.Minute})
	if wait := a.NextAt.Sub(time.Unix(0, 0)); wait != 10*time.Minute {
		t.Fatalf("Retry-After 600 waited %s", wait)
	}
}

// A Retry-After too large for a Duration waits MaxBackoff, not whatever the overflow
// wrapped to; what is not a count of seconds is ignored.
func TestWebhookRetryAfterHuge(t *testing.T) {
	w := NewWebhooks(&WebhookConfig{MaxAttempts: 50, Timeout: time.Second}, nil, WebhookOptions{Now: func() time.Time { return time.Unix(0, 0) }})
	for _, tc := range []struct {
		header string
		want   time.Duration // the wait, or 0 for the backoff's
	}{
		{"600", 10 * time.Minute},
		{" 600 ", 10 * time.Minute},
		{"18446744074", time.Hour},             // ×1e9 wraps to 0.29 s unless capped first
		{"9223372037", time.Hour},              // ×1e9 wraps negative
		{"99999999999999999999999", time.Hour}, // beyond uint64
		{"0", 0},
		{"-5", 0},
		{"Wed, 21 Oct 2026 07:28:00 GMT", 0},
		{"", 0},
	} {
		err := &httpStatusError{status: 503, retryAfter: retryAfter(tc.header)}
		wait := w.outcome(store.WebhookDelivery{}, 503, err).NextAt.Sub(time.Unix(0, 0))
		if tc.want != 0 && wait != tc.want {
			t.Errorf("Retry-After %q waited %s, want %s", tc.header, wait, tc.want)
		}
		if tc.want == 0 && (wait < w.backoff(1)/2 || wait > w.backoff(1)) {
			t.Errorf("Retry-After %q waited %s, want the backoff's [%s, %s]", tc.header, wait, w.backoff(1)/2, w.backoff(1))
		}
	}
}

// After max_attempts a delivery is dead-lettered, and the package's next event goes out.
func TestWebhookDeadLetter(t *testing.T) {
	clock := newFakeClock()
	rc := newReceiver(t, clock)
	rc.answer = func(_ int, r received) int {
		if r.Event.Data["version"] == "1.0.0" {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	}
	st := mustStore(t)
	w := newWebhooks(t, st, mustWebhookConfig(t, oneEndpoint(rc.URL, "max_attempts: 3\n")), clock)
	auditRefusal(t, st, "a", "1.0.0")
	auditRefusal(t, st, "a", "2.0.0")
	for range 10 {
		mustRunOnce(t, w)
		clock.Add(time.Hour)
	}
	var versions []string
	for _, r := range rc.received() {
		versions = append(versions, r.Event.Data["version"].(string))
	}
	if diff := cmp.Diff([]string{"1.0.0", "1.0.0", "1.0.0", "2.0.0"}, versions); diff != "" {
		t.Fatalf("received (-want +got):\n%s", diff)
	}
	log := deliveries(t, st) // newest first
	if log[1].State != store.WebhookDead || log[1].Attempts != 3 || !strings.Contains(log[1].LastError, "dead after 3 attempts") || log[1].LastStatus != 500 {
		t.Fatalf("1.0.0's delivery = %+v, want dead after 3 attempts", log[1])
	}
	if log[0].State != store.WebhookDelivered {
		t.Fatalf("2.0.0's delivery = %+v, want delivered", log[0])
	}
}

// Under failures each package's events arrive in commit order: a package's next event is
// never sent while an earlier one is pending, and other packages do not wait for it.
func TestWebhookOrderedPerPackage(t *testing.T) {
	clock := newFakeClock()
	rc := newReceiver(t, clock)
	tries := map[string]int{}
	rc.answer = func(_ int, r received) int {
		key := r.Event.Data["package"].(string) + "@" + r.Event.Data["version"].(string)
		tries[key]++
		if (key == "a@1.0.0" || key == "b@2.0.0") && tries[key] < 3 { // fail twice
			return http.StatusBadGateway
		}
		return http.StatusOK
	}
	st := mustStore(t)
	w := newWebhooks(t, st, mustWebhookConfig(t, oneEndpoint(rc.URL, "")), clock)
	for _, ev := range []string{"a@1.0.0", "b@1.0.0", "a@2.0.0", "b@2.0.0", "a@3.0.0", "b@3.0.0"} {
		id, v, _ := strings.Cut(ev, "@")
		auditRefusal(t, st, id, v)
	}
	mustRunOnce(t, w)
	state := map[string]string{}
	for _, d := range deliveries(t, st) {
		state[d.Subject+"@"+d.Version] = d.State
	}
	if state["a@1.0.0"] != store.WebhookPending || state["b@1.0.0"] != store.WebhookDelivered || state["a@2.0.0"] != store.WebhookPending {
		t.Fatalf("after the first pass: %v; b@1.0.0 must not wait for a's failing event", state)
	}
	for range 10 {
		clock.Add(time.Minute)
		mustRunOnce(t, w)
	}
	seq := map[string][]string{}
	for _, r := range rc.received() {
		p := r.Event.Data["package"].(string)
		seq[p] = append(seq[p], r.Event.Data["version"].(string))
	}
	want := map[string][]string{
		"a": {"1.0.0", "1.0.0", "1.0.0", "2.0.0", "3.0.0"},
		"b": {"1.0.0", "2.0.0", "2.0.0", "2.0.0", "3.0.0"},
	}
	if diff := cmp.Diff(want, seq); diff != "" {
		t.Fatalf("arrivals per package (-want +got):\n%s", diff)
	}
}

// Deliveries live in the store: a failed one, and an event recorded while no worker
// runs, are sent by the worker of the next start.
func TestWebhookRestartResends(t *testing.T) {
	clock := newFakeClock()
	rc := newReceiver(t, clock)
	var down atomic.Bool
	down.Store(true)
	rc.answer = func(int, received) int {
		if down.Load() {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}
	dir := t.TempDir()
	ctx := context.Background()
	cfg := mustWebhookConfig(t, oneEndpoint(rc.URL, ""))
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	w := newWebhooks(t, st, cfg, clock)
	auditRefusal(t, st, "a", "1.0.0")
	mustRunOnce(t, w)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	auditRefusal(t, st, "b", "1.0.0") // no worker running
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	down.Store(false)
	st, err = store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w = newWebhooks(t, st, cfg, clock)
	clock.Add(time.Minute)
	mustRunOnce(t, w)
	var got []string
	for _, r := range rc.received() {
		got = append(got, r.Event.Data["package"].(string))
	}
	slices.Sort(got) // a and b are different packages: sent in parallel
	if diff := cmp.Diff([]string{"a", "a", "b"}, got); diff != "" {
		t.Fatalf("arrivals (-want +got):\n%s", diff)
	}
	for _, d := range deliveries(t, st) {
		if d.State != store.WebhookDelivered {
			t.Fatalf("after restart: %+v", d)
		}
	}
}

// Close stops the loop while an attempt is in flight: the attempt is cancelled and not
// counted, so the next start sends it again.
func TestWebhookCloseCancelsInFlight(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // the server notices a closed connection only after the body
		arrived <- struct{}{}
		<-r.Context().Done() // hold the request until the worker gives up on it
	}))
	defer srv.Close()
	st := mustStore(t)
	clock := newFakeClock()
	w := NewWebhooks(mustWebhookConfig(t, oneEndpoint(srv.URL, "timeout: 30s\n")), st, WebhookOptions{Now: clock.Now, Poll: 5 * time.Millisecond, Log: discard()})
	if err := w.Register(context.Background()); err != nil {
		t.Fatal(err)
	}
	auditRefusal(t, st, "a", "1.0.0")
	w.Start(context.Background())
	<-arrived
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	d := deliveries(t, st)[0]
	if d.State != store.WebhookPending || d.Attempts != 0 {
		t.Fatalf("after Close: %+v, want pending with no attempt counted", d)
	}
}

// Without allow_private, a name that resolves to loopback is refused at connect time
// (webhooks.destination) and nothing is sent; a redirect is not followed.
func TestWebhookDestinationGuardAndNoRedirects(t *testing.T) {
	clock := newFakeClock()
	rc := newReceiver(t, clock)
	port := rc.URL[strings.LastIndex(rc.URL, ":")+1:]
	st := mustStore(t)
	// Built here, not parsed: the parser already refuses localhost without allow_private
	// (TestParseWebhooks); the guard must hold for any name that resolves to loopback.
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(testWebhookSecret, "whsec_"))
	cfg := &WebhookConfig{MaxAttempts: 3, Timeout: 5 * time.Second, Endpoints: []WebhookEndpoint{
		{Name: "guarded", URL: "http://localhost:" + port + "/", Events: []string{"*"}, key: key}}}
	w := newWebhooks(t, st, cfg, clock)
	auditRefusal(t, st, "a", "1.0.0")
	mustRunOnce(t, w)
	d := deliveries(t, st)[0]
	if !strings.Contains(d.LastError, "webhooks.destination") || d.State != store.WebhookPending {
		t.Fatalf("delivery = %+v, want refused by webhooks.destination", d)
	}
	if n := len(rc.received()); n != 0 {
		t.Fatalf("the loopback receiver got %d requests", n)
	}

	redirect := httptest.NewServer(http.RedirectHandler(rc.URL, http.StatusTemporaryRedirect))
	defer redirect.Close()
	st2 := mustStore(t)
	w2 := newWebhooks(t, st2, mustWebhookConfig(t, oneEndpoint(redirect.URL, "")), clock)
	auditRefusal(t, st2, "a", "1.0.0")
	mustRunOnce(t, w2)
	if d := deliveries(t, st2)[0]; d.LastStatus != http.StatusTemporaryRedirect || d.State != store.WebhookPending {
		t.Fatalf("redirected delivery = %+v, want a failed attempt with status 307", d)
	}
	if n := len(rc.received()); n != 0 {
		t.Fatalf("the redirect was followed: %d requests arrived", n)
	}
}

// An endpoint gets only the event types its filter names.
func TestWebhookEventFilter(t *testing.T) {
	clock := newFakeClock()
	rc := newReceiver(t, clock)
	svc := newPublishService(t, publishList(), Config{})
	cfg := mustWebhookConfig(t, "endpoints:\n  - name: yanks\n    url: "+rc.URL+"\n    secret_env: S\n    events: [release.yanked]\n    allow_private: true\n")
	w := newWebhooks(t, svc.db(), cfg, clock)
	publishOK(t, svc, "acme-hello", "1.0.0", "Says hello")
	if err := svc.Yank(context.Background(), anAdmin, "acme-hello", "1.0.0", true, ""); err != nil {
		t.Fatal(err)
	}
	mustRunOnce(t, w)
	got := rc.received()
	if len(got) != 1 || got[0].Event.Type != EventReleaseYanked {
		t.Fatalf("received %+v, want the yank only", got)
	}
}

// Two workers over one store (two replicas' worker loops) never send one delivery twice:
// the second worker's round, run while the first is still attempting the delivery, finds
// it claimed and sends nothing.
func TestWebhookTwoWorkersSendOnce(t *testing.T) {
	clock := newFakeClock()
	rc := newReceiver(t, clock)
	inFlight, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	rc.answer = func(int, received) int {
		once.Do(func() { close(inFlight); <-release })
		return http.StatusOK
	}
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := mustWebhookConfig(t, oneEndpoint(rc.URL, ""))
	a, b := newWebhooks(t, st, cfg, clock), newWebhooks(t, st, cfg, clock)
	auditRefusal(t, st, "a", "1.0.0")
	done := make(chan int)
	go func() { n, _ := a.RunOnce(context.Background()); done <- n }()
	<-inFlight
	if n := mustRunOnce(t, b); n != 0 {
		t.Errorf("the second worker attempted %d deliveries the first one is attempting", n)
	}
	close(release)
	if n := <-done; n != 1 {
		t.Errorf("the first worker attempted %d deliveries, want 1", n)
	}
	if got := len(rc.received()); got != 1 {
		t.Fatalf("the receiver got %d requests for one event, want 1", got)
	}
}

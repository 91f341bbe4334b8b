package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pluginyard/registry/store"
)

// sealAll fans every recorded event out to endpoints, with msg ids m<event id>.
func sealAll(tb testing.TB, s *store.Store, now time.Time, endpoints ...string) []store.WebhookEvent {
	tb.Helper()
	var seen []store.WebhookEvent
	_, err := s.SealWebhookEvents(context.Background(), now, 100, func(ev store.WebhookEvent) (store.WebhookSeal, error) {
		seen = append(seen, ev)
		return store.WebhookSeal{MsgID: fmt.Sprintf("m%d", ev.ID), Body: []byte(`{}`), Endpoints: endpoints}, nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return seen
}

func eventKinds(evs []store.WebhookEvent) []string {
	out := []string{}
	for _, ev := range evs {
		out = append(out, ev.Type+" "+ev.Subject+"@"+ev.Version)
	}
	return out
}

// Every event point is a trigger in the transaction of its change; nothing is recorded
// while no endpoint is registered.
// Both backends record the same events with the same detail bytes.
func TestWebhookEventsRecordedWithTheirChange(t *testing.T) {
	recorded := map[string][]store.WebhookEvent{}
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		now := time.Unix(1_800_000_000, 0)
		insert := func(id, version, data string) {
			t.Helper()
			if _, err := s.InsertRelease(ctx, mustRelease(t, s, id, version, []byte(data)), store.AuditEntry{Actor: "a", Action: "publish", Target: id + "@" + version}); err != nil {
				t.Fatal(err)
			}
		}
		insert("acme", "1.0.0", "one")
		if got := sealAll(t, s, now, "ci"); len(got) != 0 {
			t.Fatalf("events recorded with no endpoint registered: %v", eventKinds(got))
		}
		if err := s.SetWebhookEndpoints(ctx, []string{"ci"}); err != nil {
			t.Fatal(err)
		}
		insert("acme", "1.1.0", "two")
		if err := s.SetYanked(ctx, "acme", "1.0.0", true, "broken", store.AuditEntry{Actor: "a", Action: "yank"}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetYanked(ctx, "acme", "1.0.0", false, "", store.AuditEntry{Actor: "a", Action: "unyank"}); err != nil {
			t.Fatal(err)
		}
		if err := s.Deprecate(ctx, "acme", "use acme2", "acme2", store.AuditEntry{Actor: "a", Action: "deprecate"}); err != nil {
			t.Fatal(err)
		}
		if err := s.Audit(ctx, store.AuditEntry{Actor: "ci", Action: "publish", Target: "acme@2.0.0", Outcome: "refused",
			Detail: map[string]any{"reason": "bad", "rules": []string{"manifest.id"}}}); err != nil {
			t.Fatal(err)
		}
		failed := store.SyncState{Repo: "acme/stats", Outcome: store.SyncFailed, Error: "no asset", Rules: []string{"sync.asset.missing"}, CheckedAt: now}
		for range 2 { // the same failure again is not news
			if err := s.PutSyncState(ctx, failed); err != nil {
				t.Fatal(err)
			}
		}
		failed.Error = "no release"
		if err := s.PutSyncState(ctx, failed); err != nil {
			t.Fatal(err)
		}
		quarantine := func(version, reason string) {
			t.Helper()
			if err := s.SetQuarantine(ctx, store.Quarantine{PackageID: "acme", Version: version, Reason: reason, SetBy: "admin", SetAt: now},
				store.AuditEntry{Actor: "admin", Action: "quarantine"}); err != nil {
				t.Fatal(err)
			}
		}
		quarantine("1.1.0", "leaked token")
		quarantine("", "malware")
		quarantine("", "malware") // the same reason again is not news
		quarantine("", "malware, confirmed")
		got := sealAll(t, s, now, "ci")
		want := []string{
			"release.published acme@1.1.0",
			"release.yanked acme@1.0.0",
			"package.deprecated acme@",
			"verification.failed acme@2.0.0",
			"sync.failed acme/stats@",
			"sync.failed acme/stats@",
			"package.quarantined acme@1.1.0",
			"package.quarantined acme@",
			"package.quarantined acme@",
		}
		if diff := cmp.Diff(want, eventKinds(got)); diff != "" {
			t.Fatalf("events (-want +got):\n%s", diff)
		}
		var refusal struct {
			Refusal struct{ Rules []string } `json:"refusal"`
		}
		if err := json.Unmarshal(got[3].Detail, &refusal); err != nil || len(refusal.Refusal.Rules) != 1 {
			t.Fatalf("verification.failed detail %s: %v", got[3].Detail, err)
		}
		if again := sealAll(t, s, now, "ci"); len(again) != 0 {
			t.Fatalf("sealed events sealed again: %v", eventKinds(again))
		}
		recorded[b.name] = got
	})
	lite, pg := recorded["sqlite"], recorded["postgres"]
	if lite == nil || pg == nil {
		return // a backend did not run (PostgreSQL skipped without its binaries)
	}
	// The stamps are the clock's of each run; the rest, detail bytes included, must agree.
	if diff := cmp.Diff(lite, pg, cmpopts.IgnoreFields(store.WebhookEvent{}, "OccurredAt"),
		cmp.Transformer("text", func(m json.RawMessage) string { return string(m) })); diff != "" {
		t.Errorf("events recorded by sqlite (-) and postgres (+):\n%s", diff)
	}
}

func mustEvents(tb testing.TB, s *store.Store, n int) {
	tb.Helper()
	for i := range n {
		id := []string{"a", "b"}[i%2]
		if err := s.Audit(context.Background(), store.AuditEntry{Actor: "ci", Action: "publish", Target: fmt.Sprintf("%s@1.0.%d", id, i), Outcome: "refused"}); err != nil {
			tb.Fatal(err)
		}
	}
}

func dueSubjects(tb testing.TB, s *store.Store, now time.Time) []string {
	tb.Helper()
	due, err := s.DueWebhookDeliveries(context.Background(), now, 100)
	if err != nil {
		tb.Fatal(err)
	}
	out := []string{}
	for _, d := range due {
		out = append(out, d.Endpoint+" "+d.Subject+"@"+d.Version)
	}
	sort.Strings(out)
	return out
}

func findDue(tb testing.TB, due []store.WebhookDelivery, endpoint, subject string) int64 {
	tb.Helper()
	for _, d := range due {
		if d.Endpoint == endpoint && d.Subject == subject {
			return d.ID
		}
	}
	tb.Fatalf("no due delivery of %s to %s", subject, endpoint)
	return 0
}

// Only the head of each (endpoint, package) queue is due; the next waits for it to be
// delivered or to die, however many attempts that takes.
func TestWebhookQueueHeads(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		now := time.Unix(1_800_000_000, 0)
		if err := s.SetWebhookEndpoints(ctx, []string{"x", "y"}); err != nil {
			t.Fatal(err)
		}
		mustEvents(t, s, 4) // a@1.0.0 b@1.0.1 a@1.0.2 b@1.0.3
		sealAll(t, s, now, "x", "y")
		want := []string{"x a@1.0.0", "x b@1.0.1", "y a@1.0.0", "y b@1.0.1"}
		if diff := cmp.Diff(want, dueSubjects(t, s, now)); diff != "" {
			t.Fatalf("due (-want +got):\n%s", diff)
		}
		due, _ := s.DueWebhookDeliveries(ctx, now, 100)
		later := now.Add(time.Minute)
		// x's a@1.0.0 fails and waits a minute: x's a@1.0.2 stays behind it.
		if err := s.RecordWebhookAttempt(ctx, findDue(t, due, "x", "a"), store.WebhookAttempt{Status: 500, Error: "boom", State: store.WebhookPending, NextAt: later}); err != nil {
			t.Fatal(err)
		}
		// y's a@1.0.0 dies: y's a@1.0.2 is next.
		if err := s.RecordWebhookAttempt(ctx, findDue(t, due, "y", "a"), store.WebhookAttempt{Status: 500, Error: "boom", State: store.WebhookDead, NextAt: now}); err != nil {
			t.Fatal(err)
		}
		want = []string{"x b@1.0.1", "y a@1.0.2", "y b@1.0.1"}
		if diff := cmp.Diff(want, dueSubjects(t, s, now)); diff != "" {
			t.Fatalf("due after a failure and a death (-want +got):\n%s", diff)
		}
		if at, ok, err := s.NextWebhookDue(ctx); err != nil || !ok || !at.Equal(now) {
			t.Fatalf("next due = %v %v %v, want %v", at, ok, err, now)
		}
		if got := dueSubjects(t, s, later); !cmp.Equal(got[0], "x a@1.0.0") {
			t.Fatalf("due a minute later: %v, want x a@1.0.0 first", got)
		}
		log, err := s.WebhookDeliveries(ctx, store.WebhookDeliveryQuery{State: store.WebhookDead, Limit: 10})
		if err != nil || len(log) != 1 || log[0].Endpoint != "y" || log[0].Attempts != 1 || log[0].LastError != "boom" || log[0].MsgID == "" {
			t.Fatalf("dead log = %+v, %v", log, err)
		}
		if log[0].Body != nil || string(due[0].Body) != "{}" {
			t.Fatalf("the log read the body %q, or the due delivery lacks it: %q", log[0].Body, due[0].Body)
		}
	})
}

// A new endpoint is not sent the history; a removed one's pending deliveries die.
func TestWebhookEndpointsAddedAndRemoved(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		now := time.Unix(1_800_000_000, 0)
		if err := s.SetWebhookEndpoints(ctx, []string{"old"}); err != nil {
			t.Fatal(err)
		}
		mustEvents(t, s, 1)
		if err := s.SetWebhookEndpoints(ctx, []string{"old", "new"}); err != nil {
			t.Fatal(err)
		}
		mustEvents(t, s, 2)
		sealAll(t, s, now, "old", "new")
		want := []string{"new a@1.0.0", "new b@1.0.1", "old a@1.0.0", "old b@1.0.1"}
		if diff := cmp.Diff(want, dueSubjects(t, s, now)); diff != "" {
			t.Fatalf("due (-want +got):\n%s", diff)
		}
		if err := s.SetWebhookEndpoints(ctx, []string{"new"}); err != nil {
			t.Fatal(err)
		}
		want = []string{"new a@1.0.0", "new b@1.0.1"}
		if diff := cmp.Diff(want, dueSubjects(t, s, now)); diff != "" {
			t.Fatalf("due after removing old (-want +got):\n%s", diff)
		}
		dead, err := s.WebhookDeliveries(ctx, store.WebhookDeliveryQuery{Endpoint: "old", Limit: 10})
		if err != nil || len(dead) != 3 || dead[0].State != store.WebhookDead {
			t.Fatalf("old's deliveries = %+v, %v; want 3 dead", dead, err)
		}
		entries, err := s.AuditLog(ctx, 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		var changes []string
		for _, e := range entries {
			if strings.HasPrefix(e.Action, "webhook") {
				changes = append(changes, e.Action+" "+e.Target)
			}
		}
		if diff := cmp.Diff([]string{"webhook remove old", "webhook add new", "webhook add old"}, changes); diff != "" {
			t.Fatalf("audited endpoint changes, newest first (-want +got):\n%s", diff)
		}
	})
}

// Pruning keeps pending deliveries and recent history.
func TestPruneWebhooks(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		now := time.Now()
		if err := s.SetWebhookEndpoints(ctx, []string{"x"}); err != nil {
			t.Fatal(err)
		}
		mustEvents(t, s, 2)
		sealAll(t, s, now, "x")
		due, _ := s.DueWebhookDeliveries(ctx, now, 100)
		if err := s.RecordWebhookAttempt(ctx, due[0].ID, store.WebhookAttempt{Status: 204, State: store.WebhookDelivered, NextAt: now}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.PruneWebhooks(ctx, now.Add(-time.Hour)); err != nil || n != 0 {
			t.Fatalf("pruned %d (%v) of recent history, want 0", n, err)
		}
		if n, err := s.PruneWebhooks(ctx, now.Add(time.Hour)); err != nil || n != 1 {
			t.Fatalf("pruned %d (%v), want 1: the delivered event, not the pending one", n, err)
		}
		if got := dueSubjects(t, s, now); len(got) != 1 {
			t.Fatalf("due after prune: %v", got)
		}
	})
}

// A claimed delivery is not due to anyone else until its lease ends, then it is again
// (its worker died); an attempt recorded frees the queue's next. Claims racing from many
// connections never take one delivery twice.
func TestClaimWebhookDeliveries(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		now := time.Unix(1_800_000_000, 0)
		if err := s.SetWebhookEndpoints(ctx, []string{"x", "y"}); err != nil {
			t.Fatal(err)
		}
		mustEvents(t, s, 4) // a@1.0.0 b@1.0.1 a@1.0.2 b@1.0.3
		sealAll(t, s, now, "x", "y")
		claimed, err := s.ClaimWebhookDeliveries(ctx, now, time.Minute, 100)
		if err != nil || len(claimed) != 4 || !claimed[0].NextAt.Equal(now.Add(time.Minute)) || string(claimed[0].Body) != "{}" {
			t.Fatalf("first claim = %+v, %v; want the 4 queue heads, leased a minute, with their bodies", claimed, err)
		}
		if again, err := s.ClaimWebhookDeliveries(ctx, now, time.Minute, 100); err != nil || len(again) != 0 {
			t.Fatalf("claimed again within the lease: %+v, %v", again, err)
		}
		if due := dueSubjects(t, s, now); len(due) != 0 {
			t.Fatalf("claimed deliveries still due: %v", due)
		}
		x := findDue(t, claimed, "x", "a")
		if err := s.RecordWebhookAttempt(ctx, x, store.WebhookAttempt{Status: 204, State: store.WebhookDelivered, NextAt: now}); err != nil {
			t.Fatal(err)
		}
		next, err := s.ClaimWebhookDeliveries(ctx, now, time.Minute, 100)
		if err != nil || len(next) != 1 || next[0].Endpoint != "x" || next[0].Version != "1.0.2" {
			t.Fatalf("claim after x's a@1.0.0 was delivered = %+v, %v; want x's a@1.0.2", next, err)
		}
		expired, err := s.ClaimWebhookDeliveries(ctx, now.Add(time.Minute), time.Minute, 100)
		if err != nil || len(expired) != 4 {
			t.Fatalf("claim once the leases ended = %+v, %v; want the 4 heads claimed and never recorded", expired, err)
		}
	})
}

func TestClaimWebhookDeliveriesRacing(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		now := time.Unix(1_800_000_000, 0)
		if err := s.SetWebhookEndpoints(ctx, []string{"x"}); err != nil {
			t.Fatal(err)
		}
		for i := range 40 { // 40 packages: 40 queue heads
			if err := s.Audit(ctx, store.AuditEntry{Actor: "ci", Action: "publish", Target: fmt.Sprintf("p%d@1.0.0", i), Outcome: "refused"}); err != nil {
				t.Fatal(err)
			}
		}
		sealAll(t, s, now, "x")
		var (
			mu    sync.Mutex
			taken = map[int64]int{}
			wg    sync.WaitGroup
		)
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() {
				for range 10 {
					got, err := s.ClaimWebhookDeliveries(ctx, now, time.Minute, 3)
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					for _, d := range got {
						taken[d.ID]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for id, n := range taken {
			if n != 1 {
				t.Errorf("delivery %d claimed %d times", id, n)
			}
		}
		if len(taken) != 40 {
			t.Errorf("%d deliveries claimed, want all 40", len(taken))
		}
	})
}

// On PostgreSQL a claim skips a queue head another transaction holds locked (another
// replica claiming it) instead of waiting for it.
func TestClaimWebhookDeliveriesSkipsLocked(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		if b.name != "postgres" {
			t.Skip("SQLite has one writer and no row locks")
		}
		ctx := context.Background()
		s, db := b.openRaw(t)
		now := time.Unix(1_800_000_000, 0)
		if err := s.SetWebhookEndpoints(ctx, []string{"x"}); err != nil {
			t.Fatal(err)
		}
		mustEvents(t, s, 2) // a@1.0.0 b@1.0.1
		sealAll(t, s, now, "x")
		due, err := s.DueWebhookDeliveries(ctx, now, 10)
		if err != nil || len(due) != 2 {
			t.Fatalf("due = %+v, %v", due, err)
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback() }()
		if _, err := tx.ExecContext(ctx, "SELECT id FROM webhook_deliveries WHERE id = $1 FOR UPDATE", due[0].ID); err != nil {
			t.Fatal(err)
		}
		bounded, cancel := context.WithTimeout(ctx, 30*time.Second) // a claim that waits for the lock fails here
		defer cancel()
		got, err := s.ClaimWebhookDeliveries(bounded, now, time.Minute, 10)
		if err != nil || len(got) != 1 || got[0].ID != due[1].ID {
			t.Fatalf("claim beside a locked head = %+v, %v; want only delivery %d", got, err, due[1].ID)
		}
	})
}

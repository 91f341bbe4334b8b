package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

func TestSyncStatus(t *testing.T) {
	e := newEnv(t, "")
	if r := e.get("/api/v1/admin/sync"); r.Status != http.StatusUnauthorized {
		t.Fatalf("without a token: %d, want 401", r.Status)
	}
	checked := time.Date(2026, 9, 18, 6, 0, 0, 0, time.UTC)
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	states := []store.SyncState{
		{Repo: "acme/kandev-plugin-hello", CheckedAt: checked, Outcome: store.SyncFailed, Tag: "v1.1.0",
			Error: "release v1.1.0 of acme/kandev-plugin-hello has no asset acme-hello-1.1.0.tar.gz", Rules: []string{"sync.asset.missing"}},
		{Repo: "acme/kandev-plugin-other", CheckedAt: checked, Outcome: store.SyncRateLimited, RateLimitedUntil: &until},
	}
	for _, st := range states {
		if err := e.st.PutSyncState(context.Background(), st); err != nil {
			t.Fatal(err)
		}
	}
	r := e.get("/api/v1/admin/sync", "Authorization", "Bearer "+adminToken)
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	type repo struct {
		Repo             string     `json:"repo"`
		Outcome          string     `json:"outcome"`
		Error            string     `json:"error"`
		Rules            []string   `json:"rules"`
		CheckedAt        time.Time  `json:"checked_at"`
		RateLimitedUntil *time.Time `json:"rate_limited_until"`
	}
	var got struct {
		Enabled          bool       `json:"enabled"`
		RateLimitedUntil *time.Time `json:"rate_limited_until"`
		Repositories     []repo     `json:"repositories"`
	}
	r.json(t, &got)
	want := got
	want.Enabled, want.RateLimitedUntil = false, &until
	want.Repositories = []repo{
		{Repo: states[0].Repo, Outcome: "failed", Error: states[0].Error, Rules: []string{"sync.asset.missing"}, CheckedAt: checked},
		{Repo: states[1].Repo, Outcome: "rate_limited", Rules: []string{}, CheckedAt: checked, RateLimitedUntil: &until},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GET /api/v1/admin/sync (-want +got):\n%s", diff)
	}
}

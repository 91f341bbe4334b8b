package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// logRecord is one line of `--log-format json`.
type logRecord struct {
	Level string `json:"level"`
	Msg   string `json:"msg"`
}

// startLog runs serve with args until its log has a line starting with prefix, then
// stops it and returns every JSON log record it wrote.
func startLog(t *testing.T, prefix string, args ...string) []logRecord {
	t.Helper()
	c, _, errOut := testCLI(map[string]string{"REGISTRY_ADMIN_TOKEN": "admin-secret-of-at-least-32-characters"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- cmdServe(ctx, c, append([]string{"--log-format", "json"}, args...)) }()
	deadline := time.After(30 * time.Second)
	for !strings.Contains(errOut.String(), `"msg":"`+prefix) {
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d; stderr:\n%s", code, errOut)
		case <-deadline:
			t.Fatalf("no %q line in 30 s; stderr:\n%s", prefix, errOut)
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("serve exit %d; stderr:\n%s", code, errOut)
	}
	var out []logRecord
	for _, line := range strings.Split(errOut.String(), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var r logRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// TestServeStartOfflineLogsOneSyncLine starts serve with a GitHub API nobody answers: pull
// sync says so in one line, with the count of repositories and the next try, instead of a
// warning per repository.
func TestServeStartOfflineLogsOneSyncLine(t *testing.T) {
	api := freeAddr(t) // nothing listens there: every connection is refused
	recs := startLog(t, "sync: ", "--addr", freeAddr(t), "--data", t.TempDir(),
		"--plugins", "testdata/sync/plugins.yaml", "--github-api", "http://"+api)
	var syncLines, loud []string
	for _, r := range recs {
		if strings.Contains(r.Msg, "sync") {
			syncLines = append(syncLines, r.Level+" "+r.Msg)
		}
		if r.Level == "WARN" || r.Level == "ERROR" {
			loud = append(loud, r.Level+" "+r.Msg)
		}
	}
	want := "WARN sync: 2 repositories, 0 reachable: GitHub API " + api + " unreachable (dial tcp " + api +
		": connect: connection refused), retrying in 15m"
	if len(syncLines) != 1 || syncLines[0] != want {
		t.Errorf("sync log lines:\n%s\nwant exactly:\n%s", strings.Join(syncLines, "\n"), want)
	}
	if len(loud) != 1 {
		t.Errorf("%d warnings and errors at start, want the one sync line:\n%s", len(loud), strings.Join(loud, "\n"))
	}
}

// TestServeStartLogsTheRoundSummary checks the line of a round that reached GitHub: the
// totals, what was published, where the details are, and the next round.
func TestServeStartLogsTheRoundSummary(t *testing.T) {
	gh := fakeGitHub(t)
	recs := startLog(t, "sync: ", "--addr", freeAddr(t), "--data", t.TempDir(),
		"--plugins", "testdata/sync/plugins.yaml", "--github-api", gh.URL, "--sync-interval", "1h")
	var got []string
	for _, r := range recs {
		if strings.Contains(r.Msg, "sync") {
			got = append(got, r.Level+" "+r.Msg)
		}
	}
	want := "WARN sync: 2 repositories: 1 published, 0 unchanged, 1 failed, 0 errors, 0 rate limited (published acme-hello@1.0.0); " +
		"next round in 1h; per repository: GET /api/v1/admin/sync"
	if len(got) != 1 || got[0] != want {
		t.Errorf("sync log lines:\n%s\nwant exactly:\n%s", strings.Join(got, "\n"), want)
	}
}

package pull_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/pull"
	"github.com/pluginyard/registry/pull/githubtest"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

const (
	hello   = "Acme/kandev-plugin-hello"
	other   = "acme/kandev-plugin-other"
	ext     = "acme/curupira-issues"
	ghToken = "test-github-token"
)

// env is a registry on a fresh store, a fake GitHub, and a Syncer between them.
type env struct {
	t    *testing.T
	gh   *githubtest.Server
	st   *store.Store
	svc  *ingest.Service
	sync *pull.Syncer
	// pushed is the fake repository's pushed_at: after any release here, so it is the
	// index's updated_at.
	pushed time.Time
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	l, probs, err := index.LoadList(filepath.Join("testdata", "plugins.yaml"))
	if err != nil || probs.HasErrors() {
		t.Fatalf("list: %v %v", err, probs)
	}
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := ingest.New(st, l, ingest.Config{PublicURL: "https://plugins.example.com", Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits()}, log)
	t.Cleanup(svc.Close) // its background writes end before the test data is removed
	if err := svc.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	gh := githubtest.New()
	t.Cleanup(gh.Close)
	s, err := pull.New(svc, st, pull.Config{Client: pull.ClientConfig{API: gh.URL, Token: ghToken, UserAgent: "registry-test"}}, log)
	if err != nil {
		t.Fatal(err)
	}
	pushed := time.Now().Add(48 * time.Hour).Truncate(time.Second).UTC()
	gh.SetRepo(hello, githubtest.Repo{ID: 100, OwnerID: 10, Stars: 42, PushedAt: pushed})
	gh.SetRepo(other, githubtest.Repo{ID: 101, OwnerID: 10, Stars: 1})
	gh.SetRepo(ext, githubtest.Repo{ID: 102, OwnerID: 10})
	return &env{t: t, gh: gh, st: st, svc: svc, sync: s, pushed: pushed}
}

// round runs one round and returns the results by repository.
func (e *env) round() map[string]pull.Result {
	e.t.Helper()
	sum := e.sync.Round(context.Background())
	out := map[string]pull.Result{}
	for _, r := range sum.Results {
		out[r.Repo] = r
	}
	return out
}

// entry is the Kandev index entry of id, as hosts read it.
type entry struct {
	ID        string  `json:"id"`
	Version   string  `json:"version"`
	Stars     *int    `json:"stars"`
	UpdatedAt *string `json:"updated_at"`
}

func (e *env) indexEntry(id string) (entry, bool) {
	e.t.Helper()
	var doc struct {
		Plugins []entry `json:"plugins"`
	}
	if err := json.Unmarshal(e.svc.Documents().Kandev.Body.Bytes(), &doc); err != nil {
		e.t.Fatal(err)
	}
	for _, p := range doc.Plugins {
		if p.ID == id {
			return p, true
		}
	}
	return entry{}, false
}

func (e *env) state(repo string) store.SyncState {
	e.t.Helper()
	owner, name, _ := strings.Cut(repo, "/")
	st, err := e.st.SyncState(context.Background(), strings.ToLower(owner)+"/"+name)
	if err != nil {
		e.t.Fatal(err)
	}
	return *st
}

// pkg builds a valid managed plugin package of id@version.
func pkg(t *testing.T, id, version string) []byte {
	t.Helper()
	manifest := "id: " + id + "\napi_version: 2\nversion: \"" + version + "\"\ndisplay_name: Hello\ndescription: Says hello" +
		"\nauthor: Acme\ncategories: [tools]\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	fsys := fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: []byte("#!/bin/sh\necho hello " + version + "\n"), Mode: 0o755},
		"README.md":                 {Data: []byte("# Hello\n\nSays hello.\n")},
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestNewReleaseIsPublished(t *testing.T) {
	e := newEnv(t)
	data := pkg(t, "acme-hello", "1.2.0")
	e.gh.SetRelease(hello, "v1.2.0", githubtest.Asset{Name: "acme-hello-1.2.0.tar.gz", Data: data})

	res := e.round()[hello]
	if diff := cmp.Diff("Acme/kandev-plugin-hello: published acme-hello@1.2.0", res.String()); diff != "" {
		t.Errorf("progress line (-want +got):\n%s", diff)
	}
	got, ok := e.indexEntry("acme-hello")
	if !ok {
		t.Fatal("acme-hello is not in index.json after the sync")
	}
	pushed, stars := e.pushed.Format(time.RFC3339), 42
	if diff := cmp.Diff(entry{ID: "acme-hello", Version: "1.2.0", Stars: &stars, UpdatedAt: &pushed}, got); diff != "" {
		t.Errorf("index entry (-want +got):\n%s", diff)
	}
	rel, err := e.st.Release(context.Background(), "acme-hello", "1.2.0")
	if err != nil {
		t.Fatal(err)
	}
	if rel.PublishedBy != "sync" || rel.SHA256 != sha(data) {
		t.Errorf("release published by %q with sha256 %s, want sync and %s", rel.PublishedBy, rel.SHA256, sha(data))
	}
	for _, r := range e.gh.Requests() {
		download := strings.HasPrefix(r.Path, "/download/") || strings.HasPrefix(r.Path, "/objects/")
		wantAuth := "Bearer " + ghToken
		if download {
			wantAuth = ""
		}
		if r.Authorization != wantAuth || r.UserAgent != "registry-test" {
			t.Errorf("%s: Authorization %q, User-Agent %q; want %q and registry-test", r.Path, r.Authorization, r.UserAgent, wantAuth)
		}
		if !download && r.Accept != "application/vnd.github+json" {
			t.Errorf("%s: Accept %q, want application/vnd.github+json", r.Path, r.Accept)
		}
	}
}

func TestUnchangedReleaseIsNotModified(t *testing.T) {
	e := newEnv(t)
	e.gh.SetRelease(hello, "v1.0.0", githubtest.Asset{Name: "acme-hello-1.0.0.tar.gz", Data: pkg(t, "acme-hello", "1.0.0")})
	if res := e.round()[hello]; res.Outcome != store.SyncPublished {
		t.Fatalf("first round: %s", res)
	}
	first := e.state(hello)
	e.gh.Requests()

	res := e.round()[hello]
	if diff := cmp.Diff("Acme/kandev-plugin-hello: unchanged (304)", res.String()); diff != "" {
		t.Errorf("progress line (-want +got):\n%s", diff)
	}
	var got []githubtest.Request
	for _, r := range e.gh.Requests() {
		if strings.Contains(r.Path, "kandev-plugin-hello") || strings.HasPrefix(r.Path, "/objects/") {
			got = append(got, githubtest.Request{Path: r.Path, IfNoneMatch: r.IfNoneMatch, Status: r.Status})
		}
	}
	want := []githubtest.Request{
		{Path: "/repos/Acme/kandev-plugin-hello", IfNoneMatch: first.RepoETag, Status: http.StatusNotModified},
		{Path: "/repos/Acme/kandev-plugin-hello/releases/latest", IfNoneMatch: first.ReleaseETag, Status: http.StatusNotModified},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("second round requests (-want +got):\n%s", diff)
	}
	if first.ReleaseETag == "" || first.RepoETag == "" {
		t.Errorf("ETags not recorded: %+v", first)
	}
}

func TestRefusedReleaseKeepsLastGood(t *testing.T) {
	tests := []struct {
		name      string
		assets    func(t *testing.T) []githubtest.Asset
		wantRules []string
		wantIn    []string // substrings of the error
	}{
		{
			name: "missing asset",
			assets: func(t *testing.T) []githubtest.Asset {
				return []githubtest.Asset{{Name: "acme-hello-v1.1.0.tar.gz", Data: pkg(t, "acme-hello", "1.1.0")}, {Name: "notes.txt", Data: []byte("hi")}}
			},
			wantRules: []string{"sync.asset.missing"},
			wantIn:    []string{"acme-hello-1.1.0.tar.gz", "acme-hello-v1.1.0.tar.gz, notes.txt"},
		},
		{
			name: "invalid package",
			assets: func(t *testing.T) []githubtest.Asset {
				return []githubtest.Asset{{Name: "acme-hello-1.1.0.tar.gz", Data: []byte("not a gzip stream")}}
			},
			wantRules: []string{"archive.gzip"},
			wantIn:    []string{"acme-hello@1.1.0 refused"},
		},
		{
			name: "version differs from the tag",
			assets: func(t *testing.T) []githubtest.Asset {
				return []githubtest.Asset{{Name: "acme-hello-1.1.0.tar.gz", Data: pkg(t, "acme-hello", "1.0.9")}}
			},
			wantRules: []string{"package.filename"},
			wantIn:    []string{"acme-hello@1.1.0 refused"},
		},
		{
			name: "checksums.txt mismatch",
			assets: func(t *testing.T) []githubtest.Asset {
				return []githubtest.Asset{{Name: "acme-hello-1.1.0.tar.gz", Data: pkg(t, "acme-hello", "1.1.0")},
					{Name: "checksums.txt", Data: []byte(strings.Repeat("ab", 32) + "  acme-hello-1.1.0.tar.gz\n")}}
			},
			wantRules: []string{"sync.checksums.mismatch"},
			wantIn:    []string{strings.Repeat("ab", 32)},
		},
		{
			name: "bundle without a trusted root",
			assets: func(t *testing.T) []githubtest.Asset {
				return []githubtest.Asset{{Name: "acme-hello-1.1.0.tar.gz", Data: pkg(t, "acme-hello", "1.1.0")},
					{Name: "acme-hello-1.1.0.tar.gz.sigstore.json", Data: []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`)}}
			},
			wantRules: []string{"signature.root.missing"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.gh.SetRelease(hello, "v1.0.0", githubtest.Asset{Name: "acme-hello-1.0.0.tar.gz", Data: pkg(t, "acme-hello", "1.0.0")})
			if res := e.round()[hello]; res.Outcome != store.SyncPublished {
				t.Fatalf("first round: %s", res)
			}
			e.gh.SetRelease(hello, "v1.1.0", tt.assets(t)...)

			res := e.round()[hello]
			if res.Outcome != store.SyncFailed {
				t.Fatalf("outcome %q, want failed: %s", res.Outcome, res)
			}
			if diff := cmp.Diff(tt.wantRules, res.Rules); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
			for _, s := range tt.wantIn {
				if !strings.Contains(res.Error, s) {
					t.Errorf("error %q does not mention %q", res.Error, s)
				}
			}
			if got, _ := e.indexEntry("acme-hello"); got.Version != "1.0.0" {
				t.Errorf("index.json lists acme-hello %q, want the last good 1.0.0", got.Version)
			}
			st := e.state(hello)
			if diff := cmp.Diff([]string{store.SyncFailed, "v1.1.0"}, []string{st.Outcome, st.Tag}); diff != "" {
				t.Errorf("recorded state (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantRules, st.Rules); diff != "" {
				t.Errorf("recorded rules (-want +got):\n%s", diff)
			}
			// The same release is not evaluated again, and it still shows as failing.
			again := e.round()[hello]
			if !again.NotModified || again.Outcome != store.SyncFailed || again.Error != res.Error {
				t.Errorf("next round: %s; want the recorded failure with 304", again)
			}
		})
	}
}

func TestReleaseChecksums(t *testing.T) {
	data := pkg(t, "acme-hello", "1.0.0")
	tests := []struct {
		name      string
		checksums string
	}{
		{"a line for the tarball", sha(data) + "  acme-hello-1.0.0.tar.gz\n"},
		{"a binary-mode line with a folder", strings.ToUpper(sha(data)) + " *dist/acme-hello-1.0.0.tar.gz\r\n"},
		{"package-internal lines only", sha([]byte("x")) + "  manifest.yaml\n" + sha([]byte("y")) + "  server/plugin-linux-amd64\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.gh.SetRelease(hello, "v1.0.0", githubtest.Asset{Name: "acme-hello-1.0.0.tar.gz", Data: data},
				githubtest.Asset{Name: "checksums.txt", Data: []byte(tt.checksums)})
			if res := e.round()[hello]; res.Outcome != store.SyncPublished {
				t.Errorf("got %s, want published", res)
			}
		})
	}
}

func TestIdenticalBytesAreUnchanged(t *testing.T) {
	e := newEnv(t)
	data := pkg(t, "acme-hello", "1.0.0")
	if _, err := e.svc.Publish(context.Background(), ingest.PublishInput{Package: bytes.NewReader(data), FileName: "acme-hello-1.0.0.tar.gz",
		Actor: ingest.Actor{Name: "admin", Admin: true}}); err != nil {
		t.Fatal(err)
	}
	e.gh.SetRelease(hello, "v1.0.0", githubtest.Asset{Name: "acme-hello-1.0.0.tar.gz", Data: data})
	res := e.round()[hello]
	if diff := cmp.Diff("Acme/kandev-plugin-hello: unchanged (acme-hello@1.0.0 already published)", res.String()); diff != "" {
		t.Errorf("progress line (-want +got):\n%s", diff)
	}
}

func TestRateLimited(t *testing.T) {
	now := time.Date(2026, 9, 18, 6, 0, 0, 0, time.UTC)
	reset := now.Add(20 * time.Minute)
	capped := now.Add(pull.MaxRateLimitDelay)
	remaining0 := func(reset string) http.Header {
		return http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {reset}}
	}
	tests := []struct {
		name   string
		answer githubtest.Answer
		until  time.Time
	}{
		{"403 with X-RateLimit-Remaining 0", githubtest.Answer{Status: http.StatusForbidden, Header: remaining0(strconv.FormatInt(reset.Unix(), 10))}, reset},
		{"429 with Retry-After", githubtest.Answer{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"120"}}}, now.Add(2 * time.Minute)},
		{"403 with Retry-After (secondary limit)", githubtest.Answer{Status: http.StatusForbidden, Header: http.Header{"Retry-After": {"60"}}}, now.Add(time.Minute)},
		// whatever the server asks for, sync waits at most an hour
		{"Retry-After of 99999999999 s", githubtest.Answer{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"99999999999"}}}, capped},
		{"Retry-After beyond 64 bits", githubtest.Answer{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"99999999999999999999999999"}}}, capped},
		{"Retry-After date in 9999", githubtest.Answer{Status: http.StatusForbidden, Header: http.Header{"Retry-After": {"Fri, 31 Dec 9999 23:59:59 GMT"}}}, capped},
		{"X-RateLimit-Reset in 9999", githubtest.Answer{Status: http.StatusForbidden, Header: remaining0("253402300799")}, capped},
		{"X-RateLimit-Reset beyond any year", githubtest.Answer{Status: http.StatusForbidden, Header: remaining0("9223372036854775807")}, capped},
		{"X-RateLimit-Reset in the past", githubtest.Answer{Status: http.StatusForbidden, Header: remaining0("1")}, now},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			clock := now
			pull.SetNow(e.sync, func() time.Time { return clock })
			e.gh.SetRelease(hello, "v1.0.0", githubtest.Asset{Name: "acme-hello-1.0.0.tar.gz", Data: pkg(t, "acme-hello", "1.0.0")})
			e.gh.SetRelease(other, "v1.0.0", githubtest.Asset{Name: "acme-other-1.0.0.tar.gz", Data: pkg(t, "acme-other", "1.0.0")})
			e.gh.Queue(tt.answer) // the first API request is hello's

			res := e.round()
			stamp := tt.until.Format(time.RFC3339)
			if got := res[hello].String(); got != hello+": rate limited until "+stamp {
				t.Errorf("hello: %q, want rate limited until %s", got, stamp)
			}
			if res[other].Outcome != store.SyncPublished {
				t.Errorf("another repository: %s, want published (one repository's rate limit does not stop the others)", res[other])
			}
			if st := e.state(hello); st.RateLimitedUntil == nil || !st.RateLimitedUntil.Equal(tt.until) || st.Outcome != store.SyncRateLimited {
				t.Errorf("recorded %s until %v, want rate_limited until %v", st.Outcome, st.RateLimitedUntil, tt.until)
			}
			e.gh.Requests()
			if !tt.until.After(now) {
				return
			}

			// Before the deadline hello is not asked; the others are.
			clock = tt.until.Add(-time.Second)
			res = e.round()
			if !res[hello].NotChecked || res[other].Outcome == store.SyncRateLimited {
				t.Errorf("before the deadline: %s / %s, want hello not checked and other checked", res[hello], res[other])
			}
			var helloReqs, others int
			for _, r := range e.gh.Requests() {
				if strings.Contains(strings.ToLower(r.Path), "kandev-plugin-hello") {
					helloReqs++
				} else {
					others++
				}
			}
			if helloReqs != 0 || others == 0 {
				t.Errorf("before the deadline: %d requests for hello (want none), %d for the others (want some)", helloReqs, others)
			}
			// After it, hello resumes.
			clock = tt.until.Add(time.Second)
			if res := e.round()[hello]; res.Outcome != store.SyncPublished {
				t.Errorf("after the deadline: %s, want published", res)
			}
		})
	}
}

// TestAssetsOnlyFromDownloadHosts: a release whose asset download redirects to a host
// outside the download hosts is not fetched (the host is never contacted); the error names
// the host and the setting, and other repositories sync as usual.
func TestAssetsOnlyFromDownloadHosts(t *testing.T) {
	e := newEnv(t)
	var reached atomic.Int32
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	defer internal.Close()
	e.gh.SetRelease(hello, "v1.0.0", githubtest.Asset{Name: "acme-hello-1.0.0.tar.gz", Data: pkg(t, "acme-hello", "1.0.0")})
	e.gh.SetRelease(other, "v1.0.0", githubtest.Asset{Name: "acme-other-1.0.0.tar.gz", Data: pkg(t, "acme-other", "1.0.0")})
	e.gh.RedirectDownloads(hello, internal.URL)

	res := e.round()
	want := `download from host "` + strings.TrimPrefix(internal.URL, "http://") + `" refused`
	if r := res[hello]; r.Outcome != store.SyncError || !strings.Contains(r.Error, want) || !strings.Contains(r.Error, pull.DownloadHostsSetting) {
		t.Errorf("redirected asset: %s; want an error saying %q and naming %s", r, want, pull.DownloadHostsSetting)
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the host outside the download hosts was contacted %d times", n)
	}
	if r := res[other]; r.Outcome != store.SyncPublished {
		t.Errorf("another repository: %s, want published", r)
	}
	if _, ok := e.indexEntry("acme-hello"); ok {
		t.Error("acme-hello is in the index")
	}
}

// TestRecordedDeadlineIsCapped: a deadline stored before the cap existed (the year 9999)
// defers its repository by at most MaxRateLimitDelay after that check.
func TestRecordedDeadlineIsCapped(t *testing.T) {
	e := newEnv(t)
	now := time.Date(2026, 9, 18, 6, 0, 0, 0, time.UTC)
	forever := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	if err := e.st.PutSyncState(context.Background(), store.SyncState{Repo: "acme/kandev-plugin-hello", CheckedAt: now,
		Outcome: store.SyncRateLimited, RateLimitedUntil: &forever, IDs: []string{}, Rules: []string{}, Published: []string{}}); err != nil {
		t.Fatal(err)
	}
	e.gh.SetRelease(hello, "v1.0.0", githubtest.Asset{Name: "acme-hello-1.0.0.tar.gz", Data: pkg(t, "acme-hello", "1.0.0")})
	clock := now.Add(time.Minute)
	pull.SetNow(e.sync, func() time.Time { return clock })
	if res := e.round()[hello]; !res.NotChecked || !res.RateLimitedUntil.Equal(now.Add(pull.MaxRateLimitDelay)) {
		t.Errorf("within the hour: %s, want not checked until %s", res, now.Add(pull.MaxRateLimitDelay).Format(time.RFC3339))
	}
	clock = now.Add(pull.MaxRateLimitDelay + time.Second)
	if res := e.round()[hello]; res.Outcome != store.SyncPublished {
		t.Errorf("after the hour: %s, want published", res)
	}
}

func TestRepositoryIdentity(t *testing.T) {
	tests := []struct {
		name   string
		change func(gh *githubtest.Server)
		want   string // outcome of the round after the change
		rules  []string
	}{
		{"re-created under the same name", func(gh *githubtest.Server) {
			gh.SetRepo(hello, githubtest.Repo{ID: 999, OwnerID: 10, Stars: 3})
		}, store.SyncFailed, []string{"sync.identity.changed"}},
		{"name now held by another account", func(gh *githubtest.Server) {
			gh.SetRepo(hello, githubtest.Repo{ID: 999, OwnerID: 77, Stars: 3})
		}, store.SyncFailed, []string{"sync.identity.changed"}},
		{"transferred (owner id changed)", func(gh *githubtest.Server) {
			gh.SetRepo(hello, githubtest.Repo{ID: 100, OwnerID: 77, Stars: 3})
		}, store.SyncFailed, []string{"sync.identity.changed"}},
		{"renamed, same ids (GitHub redirects)", func(gh *githubtest.Server) {
			gh.Rename(hello, "acme/hello-renamed")
		}, store.SyncPublished, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.gh.SetRelease(hello, "v1.0.0", githubtest.Asset{Name: "acme-hello-1.0.0.tar.gz", Data: pkg(t, "acme-hello", "1.0.0")})
			if res := e.round()[hello]; res.Outcome != store.SyncPublished {
				t.Fatalf("first round: %s", res)
			}
			pin, err := e.st.GetPin(context.Background(), ingest.PinSubject(hello))
			if err != nil || pin.RepositoryID != "100" || pin.OwnerID != "10" || pin.Source != "sync" {
				t.Fatalf("pin after the first round: %+v, %v", pin, err)
			}
			tt.change(e.gh)
			newer := pkg(t, "acme-hello", "1.1.0")
			e.gh.SetRelease(hello, "v1.1.0", githubtest.Asset{Name: "acme-hello-1.1.0.tar.gz", Data: newer})

			res := e.round()[hello]
			if res.Outcome != tt.want {
				t.Fatalf("got %s, want %s", res, tt.want)
			}
			if diff := cmp.Diff(tt.rules, res.Rules); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
			got, _ := e.indexEntry("acme-hello")
			if tt.want == store.SyncFailed {
				if got.Version != "1.0.0" || got.Stars == nil || *got.Stars != 42 {
					t.Errorf("index entry %+v: want version 1.0.0 and the pinned repository's 42 stars", got)
				}
				// An admin's pin reset lets the next round pin the new ids and publish.
				if err := e.st.DeletePin(context.Background(), ingest.PinSubject(hello), store.AuditEntry{Actor: "admin", Action: "pin.reset"}); err != nil {
					t.Fatal(err)
				}
				if res := e.round()[hello]; res.Outcome != store.SyncPublished {
					t.Errorf("after the pin reset: %s, want published", res)
				}
			} else if res.RenamedTo != "acme/hello-renamed" || got.Version != "1.1.0" {
				t.Errorf("renamed: result %s, index version %q", res, got.Version)
			}
		})
	}
}

func TestStarsReachTheIndex(t *testing.T) {
	e := newEnv(t)
	e.gh.SetRelease(hello, "v1.0.0", githubtest.Asset{Name: "acme-hello-1.0.0.tar.gz", Data: pkg(t, "acme-hello", "1.0.0")})
	e.round()
	pushed := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	e.gh.SetRepo(hello, githubtest.Repo{ID: 100, OwnerID: 10, Stars: 1234, PushedAt: pushed})

	if res := e.round()[hello]; res.Outcome != store.SyncUnchanged {
		t.Errorf("got %s, want unchanged", res)
	}
	got, _ := e.indexEntry("acme-hello")
	stamp, stars := pushed.Format(time.RFC3339), 1234
	if diff := cmp.Diff(entry{ID: "acme-hello", Version: "1.0.0", Stars: &stars, UpdatedAt: &stamp}, got); diff != "" {
		t.Errorf("index entry (-want +got):\n%s", diff)
	}
}

func TestSyncStates(t *testing.T) {
	e := newEnv(t)
	e.gh.SetRelease(hello, "v1.0.0", githubtest.Asset{Name: "acme-hello-1.0.0.tar.gz", Data: pkg(t, "acme-hello", "1.0.0")})
	states, err := e.sync.SyncStates(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Repo, Outcome string
		IDs, Rules    []string
	}
	var got []row
	for _, s := range states {
		got = append(got, row{s.Repo, s.Outcome, s.IDs, s.Rules})
	}
	want := []row{
		{"acme/kandev-plugin-hello", "pending", []string{"acme-hello"}, []string{}},
		{"acme/kandev-plugin-other", "pending", []string{"acme-other"}, []string{}},
		{"acme/curupira-issues", "pending", []string{"@acme/curupira-issues"}, []string{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("before any round (-want +got):\n%s", diff)
	}
	e.round()
	if states, err = e.sync.SyncStates(context.Background()); err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, s := range states {
		got = append(got, row{s.Repo, s.Outcome, s.IDs, s.Rules})
	}
	want = []row{
		{"acme/kandev-plugin-hello", "published", []string{"acme-hello"}, []string{}},
		{"acme/kandev-plugin-other", "failed", nil, []string{"sync.release.missing"}},
		{"acme/curupira-issues", "failed", nil, []string{"sync.release.missing"}},
	}
	if diff := cmp.Diff(want, got, cmpEmpty); diff != "" {
		t.Errorf("after a round (-want +got):\n%s", diff)
	}
}

var cmpEmpty = cmp.FilterValues(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

func TestAssetName(t *testing.T) {
	tests := []struct{ id, tag, want string }{
		{"acme-hello", "v1.2.0", "acme-hello-1.2.0.tar.gz"},
		{"acme-hello", "1.2.0", "acme-hello-1.2.0.tar.gz"},
		{"@acme/curupira-issues", "v0.3.1", "acme-curupira-issues-0.3.1.tar.gz"},
	}
	for _, tt := range tests {
		if got := pull.AssetName(tt.id, tt.tag); got != tt.want {
			t.Errorf("AssetName(%q, %q) = %q, want %q", tt.id, tt.tag, got, tt.want)
		}
	}
}

package pull_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/pull"
	"github.com/pluginyard/registry/pull/githubtest"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

// poisoned is a package of acme-hello@version whose manifest text is manifest.
func poisoned(t *testing.T, manifest string) []byte {
	t.Helper()
	fsys := fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: []byte("#!/bin/sh\necho hello\n"), Mode: 0o755},
		"README.md":                 {Data: []byte("# Hello\n")},
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func helloManifest(version, description string) string {
	return "id: acme-hello\napi_version: 2\nversion: \"" + version + "\"\ndisplay_name: Hello\ndescription: " + description +
		"\nauthor: Acme\ncategories: [tools]\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
}

// TestSyncRefusesIndexPoisoning: a listed repository cannot poison the index through sync
// (no token needed there): oversized or control-character fields are refused with their
// rule, and the last good release of that repository and everyone else's stay listed.
func TestSyncRefusesIndexPoisoning(t *testing.T) {
	bel := strings.Repeat(`\a`, 400<<10)
	aliased := "id: acme-hello\napi_version: 2\nversion: \"1.1.0\"\ndescription: &d \"" + bel + "\"\ndisplay_name: *d\nauthor: *d\n" +
		"categories: [tools]\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	for _, tt := range []struct {
		name, manifest, rule string
		maxIndex             int
	}{
		{"control characters reused through aliases", aliased, "manifest.field.characters", 0},
		{"an ordinary 900 KiB description", helloManifest("1.1.0", strings.Repeat("hello world ", 75<<10)), "manifest.field.length", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newPoisonEnv(t, tt.maxIndex)
			e.gh.SetRelease(hello, "v1.0.0", githubtest.Asset{Name: "acme-hello-1.0.0.tar.gz", Data: pkg(t, "acme-hello", "1.0.0")})
			e.gh.SetRelease(other, "v1.0.0", githubtest.Asset{Name: "acme-other-1.0.0.tar.gz", Data: pkg(t, "acme-other", "1.0.0")})
			if res := e.round(); res[hello].Outcome != store.SyncPublished || res[other].Outcome != store.SyncPublished {
				t.Fatalf("first round: %v", res)
			}
			e.gh.SetRelease(hello, "v1.1.0", githubtest.Asset{Name: "acme-hello-1.1.0.tar.gz", Data: poisoned(t, tt.manifest)})
			res := e.round()[hello]
			if res.Outcome != store.SyncFailed || !slices.Contains(res.Rules, tt.rule) {
				t.Fatalf("poisoned release: %s (rules %v), want failed with %s", res, res.Rules, tt.rule)
			}
			if _, err := e.st.Release(context.Background(), "acme-hello", "1.1.0"); err == nil {
				t.Error("the poisoned release was stored")
			}
			if got, _ := e.indexEntry("acme-hello"); got.Version != "1.0.0" {
				t.Errorf("index.json lists acme-hello %q, want the last good 1.0.0", got.Version)
			}
			if _, ok := e.indexEntry("acme-other"); !ok {
				t.Error("the bystander left index.json")
			}
			if r := e.svc.LastRefusal(); r != nil {
				t.Errorf("the index is refusing rebuilds: %s", r.Reason)
			}
		})
	}
}

// TestSyncOverTheIndexLimitLands: a synced release that would push index.json over the
// host limit is published, not refused: index.json stays within the limit, partial, and
// the release is in exactly one id shard.
func TestSyncOverTheIndexLimitLands(t *testing.T) {
	const limit = 2 << 10
	e := newPoisonEnv(t, limit)
	e.gh.SetRelease(hello, "v1.0.0", githubtest.Asset{Name: "acme-hello-1.0.0.tar.gz", Data: pkg(t, "acme-hello", "1.0.0")})
	e.gh.SetRelease(other, "v1.0.0", githubtest.Asset{Name: "acme-other-1.0.0.tar.gz", Data: pkg(t, "acme-other", "1.0.0")})
	e.round()
	long := helloManifest("1.1.0", strings.Repeat("Within the field limit. ", 40))
	e.gh.SetRelease(hello, "v1.1.0", githubtest.Asset{Name: "acme-hello-1.1.0.tar.gz", Data: poisoned(t, long)})
	if res := e.round()[hello]; res.Outcome != store.SyncPublished {
		t.Fatalf("release over the limit: %s (rules %v), want published", res, res.Rules)
	}
	docs := e.svc.Documents()
	if n := len(docs.Kandev.Body.Bytes()); n > limit || !docs.Partial() {
		t.Fatalf("index.json: %d bytes (limit %d), partial %v", n, limit, docs.Partial())
	}
	ids, _ := docs.ShardURLs()
	found := 0
	for _, u := range ids {
		d, ok, err := docs.Shard(u[strings.LastIndex(u, "/")+1:])
		if err != nil || !ok || d.Body.Len() > limit {
			t.Fatalf("%s: ok %v, err %v", u, ok, err)
		}
		if strings.Contains(string(d.Body.Bytes()), `"id":"acme-hello"`) {
			found++
			if !strings.Contains(string(d.Body.Bytes()), `"version":"1.1.0"`) {
				t.Errorf("%s lists acme-hello, not at 1.1.0: %s", u, d.Body.Bytes())
			}
		}
	}
	if found != 1 {
		t.Errorf("acme-hello is in %d id shards, want 1", found)
	}
}

// newPoisonEnv is newEnv with the index limit set (0: the default).
func newPoisonEnv(t *testing.T, maxIndex int) *env {
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
	svc := ingest.New(st, l, ingest.Config{PublicURL: "https://plugins.example.com", Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits(),
		MaxIndexBytes: maxIndex}, log)
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
	gh.SetRepo(hello, githubtest.Repo{ID: 100, OwnerID: 10})
	gh.SetRepo(other, githubtest.Repo{ID: 101, OwnerID: 10})
	gh.SetRepo(ext, githubtest.Repo{ID: 102, OwnerID: 10})
	return &env{t: t, gh: gh, st: st, svc: svc, sync: s}
}

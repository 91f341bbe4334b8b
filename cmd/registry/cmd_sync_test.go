package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/pull/githubtest"
)

// syncPackage builds a valid managed plugin package of id@version.
func syncPackage(t *testing.T, id, version string) []byte {
	t.Helper()
	manifest := "id: " + id + "\napi_version: 2\nversion: \"" + version + "\"\ndescription: Says hello\nauthor: Acme\n" +
		"runtime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	var buf bytes.Buffer
	err := pack.FS(fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: []byte("#!/bin/sh\n"), Mode: 0o755},
		"README.md":                 {Data: []byte("# Hello\n")},
	}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fakeGitHub serves acme-hello 1.0.0 properly and acme-broken without its asset.
func fakeGitHub(t *testing.T) *githubtest.Server {
	t.Helper()
	gh := githubtest.New()
	t.Cleanup(gh.Close)
	gh.SetRepo("Acme/kandev-plugin-hello", githubtest.Repo{ID: 1, OwnerID: 9, Stars: 5})
	gh.SetRelease("Acme/kandev-plugin-hello", "v1.0.0", githubtest.Asset{Name: "acme-hello-1.0.0.tar.gz", Data: syncPackage(t, "acme-hello", "1.0.0")})
	gh.SetRepo("acme/kandev-plugin-broken", githubtest.Repo{ID: 2, OwnerID: 9})
	gh.SetRelease("acme/kandev-plugin-broken", "v2.0.0", githubtest.Asset{Name: "broken.zip", Data: []byte("zip")})
	return gh
}

func TestCmdSyncOnce(t *testing.T) {
	gh := fakeGitHub(t)
	env := map[string]string{"REGISTRY_DATA": t.TempDir(), "REGISTRY_PLUGINS": "testdata/sync/plugins.yaml",
		"REGISTRY_GITHUB_API": gh.URL, "REGISTRY_GITHUB_TOKEN": "tok"}
	broken := "acme/kandev-plugin-broken: failed: sync.asset.missing: release v2.0.0 of acme/kandev-plugin-broken has no asset acme-broken-2.0.0.tar.gz " +
		"(expected <id>-<version>.tar.gz: id acme-broken, version from tag v2.0.0); its assets are: broken.zip. Attach the package `registry pack` builds under exactly that name"
	rounds := []struct {
		want []string
		code int
	}{
		{[]string{
			"Acme/kandev-plugin-hello: published acme-hello@1.0.0",
			broken,
			"total: 2 repositories: 1 published, 0 unchanged, 1 failed, 0 errors, 0 rate limited",
		}, exitInvalid},
		{[]string{
			"Acme/kandev-plugin-hello: unchanged (304)",
			broken + " (release unchanged since, 304)",
			"total: 2 repositories: 0 published, 1 unchanged, 1 failed, 0 errors, 0 rate limited",
		}, exitInvalid},
	}
	for i, r := range rounds {
		c, out, errOut := testCLI(env)
		code := cmdSync(context.Background(), c, []string{"--once"})
		if code != r.code {
			t.Errorf("round %d: exit %d, want %d; stderr:\n%s", i+1, code, r.code, errOut)
		}
		if diff := cmp.Diff(r.want, strings.Split(strings.TrimSpace(out.String()), "\n")); diff != "" {
			t.Errorf("round %d output (-want +got):\n%s", i+1, diff)
		}
	}
	for _, req := range gh.Requests() {
		if strings.HasPrefix(req.Path, "/repos/") && req.Authorization != "Bearer tok" {
			t.Errorf("%s sent Authorization %q, want the REGISTRY_GITHUB_TOKEN", req.Path, req.Authorization)
		}
	}
}

func TestCmdSyncUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"loop without an interval", []string{"--sync-interval", "0"}, "a loop needs a positive interval"},
		{"bad API base", []string{"--once", "--github-api", "ftp://example.com"}, "--github-api"},
		{"unknown flag", []string{"--nope"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, errOut := testCLI(map[string]string{"REGISTRY_DATA": t.TempDir(), "REGISTRY_PLUGINS": "testdata/sync/plugins.yaml"})
			if code := cmdSync(context.Background(), c, tt.args); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("stderr %q does not mention %q", errOut, tt.want)
			}
		})
	}
}

// cancelOnTotal cancels a context once a total line is written.
type cancelOnTotal struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	cancel context.CancelFunc
}

func (w *cancelOnTotal) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.HasPrefix(p, []byte("total: ")) {
		w.cancel()
	}
	return w.buf.Write(p)
}

func TestCmdSyncLoopStopsWhenInterrupted(t *testing.T) {
	gh := fakeGitHub(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &cancelOnTotal{cancel: cancel}
	env := map[string]string{"REGISTRY_DATA": t.TempDir(), "REGISTRY_PLUGINS": "testdata/sync/plugins.yaml", "REGISTRY_GITHUB_API": gh.URL}
	c := &cli{stdout: out, stderr: &bytes.Buffer{}, getenv: func(k string) string { return env[k] }}
	if code := cmdSync(ctx, c, []string{"--sync-interval", "1h"}); code != exitOK {
		t.Errorf("exit %d, want 0", code)
	}
	if got := strings.Count(out.buf.String(), "total: "); got != 1 {
		t.Errorf("%d rounds before the interrupt was seen, want 1:\n%s", got, out.buf.String())
	}
}

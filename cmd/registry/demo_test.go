package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/examples"
	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify/signature"
)

// serveDemo runs `serve --demo` on data with the repository's plugins.yaml until stop.
func serveDemo(t *testing.T, data string) (addr string, stdout *syncBuffer, stop func()) {
	t.Helper()
	return serveDemoList(t, data, "../../plugins.yaml")
}

func serveDemoList(t *testing.T, data, list string) (addr string, stdout *syncBuffer, stop func()) {
	t.Helper()
	addr = freeAddr(t)
	c, out, errOut := testCLI(map[string]string{"REGISTRY_ADMIN_TOKEN": "admin-secret"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- cmdServe(ctx, c, []string{"--demo", "--addr", addr, "--data", data, "--plugins", list})
	}()
	for i := 0; ; i++ {
		if res, err := http.Get("http://" + addr + "/healthz"); err == nil {
			res.Body.Close()
			break
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d; stderr: %s", code, errOut)
		case <-time.After(100 * time.Millisecond):
		}
		if i == 300 {
			t.Fatalf("serve did not answer in 30 s; stderr: %s", errOut)
		}
	}
	return addr, out, func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("serve exit = %d; stderr: %s", code, errOut)
		}
	}
}

func demoGet(t *testing.T, addr, path string) []byte {
	t.Helper()
	res, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, res.StatusCode, err)
	}
	return b
}

// demoKey reads the demo's key from the data directory.
func demoKey(t *testing.T, data string) ed25519.PrivateKey {
	t.Helper()
	path := filepath.Join(data, "demo", "ed25519.key")
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("%s mode %o, want 600", path, info.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seed, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(seed) != ed25519.SeedSize {
		t.Fatalf("%s: not a base64 seed: %v", path, err)
	}
	return ed25519.NewKeyFromSeed(seed)
}

// TestServeDemoShowsTrust: the demo publishes hello-managed signed with its own ed25519 key
// (pinned in the demo's plugins.yaml), slack-relay with the committed Sigstore bundle
// verified against the test trusted root, and every other example unsigned; the API and the
// pages say so. A second start keeps the key.
func TestServeDemoShowsTrust(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	addr, out, stop := serveDemo(t, data)
	key := demoKey(t, data)
	fp := signature.KeyFingerprint(key.Public().(ed25519.PublicKey))

	want := map[string]*signature.Result{
		"hello-managed": {Type: signature.TypeEd25519, KeyFingerprint: fp},
		"slack-relay": {Type: signature.TypeSigstore, Repository: "pluginyard/slack-relay", Workflow: ".github/workflows/release.yml",
			Ref: "refs/tags/v1.2.0", Issuer: signature.GitHubActionsIssuer, BundleType: signature.BundleDSSE,
			SAN: "https://github.com/pluginyard/slack-relay/.github/workflows/release.yml@refs/tags/v1.2.0"},
		"pr-insights":       nil,
		"task-board-canvas": nil,
	}
	for id, w := range want {
		var got struct{ Signature *signature.Result }
		if err := json.Unmarshal(demoGet(t, addr, "/api/v1/plugins/"+id), &got); err != nil {
			t.Fatal(err)
		}
		if got.Signature != nil {
			got.Signature.LogIndex, got.Signature.IntegratedTime = 0, time.Time{}
		}
		if diff := cmp.Diff(w, got.Signature); diff != "" {
			t.Errorf("%s: signature (-want +got):\n%s", id, diff)
		}
	}
	pages := map[string][]string{
		"hello-managed": {"checksums.txt signed with ed25519 key " + fp + ", listed for this package in plugins.yaml"},
		"slack-relay": {"built by pluginyard/slack-relay, release.yml at refs/tags/v1.2.0 in GitHub Actions",
			"verified at publish against the registry", "test trusted root"},
		"pr-insights":       {"Not signed", "This release is not signed"},
		"task-board-canvas": {"Not signed", "This release is not signed"},
	}
	pages["/extensions/curupira-github-issues"] = []string{"Not signed", "This release is not signed"}
	for id, phrases := range pages {
		path := id
		if !strings.HasPrefix(id, "/") {
			path = "/plugins/" + id
		}
		page := strings.Join(strings.Fields(string(demoGet(t, addr, path))), " ")
		for _, p := range phrases {
			if !strings.Contains(page, strings.ReplaceAll(p, "'", "&#39;")) {
				t.Errorf("%s does not say %q", path, p)
			}
		}
	}
	for _, line := range []string{"demo: generated an ed25519 signing key", "demo: published hello-managed@1.0.0 (checksums.txt signed with the demo's ed25519 key " + fp,
		"demo: published slack-relay@1.2.0 (Sigstore: pluginyard/slack-relay", "TEST trusted root"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("stdout does not say %q:\n%s", line, out)
		}
	}
	checkDemoList(t, data, key)
	checkTestRootIsScoped(t, addr)
	stop()

	_, out, stop = serveDemo(t, data)
	defer stop()
	if !key.Equal(demoKey(t, data)) {
		t.Error("the second start replaced the demo key")
	}
	if strings.Contains(out.String(), "generated") {
		t.Errorf("the second start generated a key:\n%s", out)
	}
	checkDemoList(t, data, key)
}

// checkTestRootIsScoped: the demo's test root verified the demo's own release only; the
// running registry has no trusted root, so the same bundle sent through the API is refused.
func checkTestRootIsScoped(t *testing.T, addr string) {
	t.Helper()
	rel, err := examples.SigstorePackage()
	if err != nil || rel.Stale != nil {
		t.Fatal(err, rel.Stale)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, part := range []struct {
		field, name string
		data        []byte
	}{{"package", "slack-relay-1.2.0.tar.gz", rel.Package}, {"bundle", "slack-relay.sigstore.json", rel.Bundle}} {
		w, err := mw.CreateFormFile(part.field, part.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(part.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/api/v1/packages", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer admin-secret")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusUnprocessableEntity || !bytes.Contains(got, []byte(`"signature.root.missing"`)) {
		t.Errorf("the demo bundle through the API: %d %s; want 422 signature.root.missing (the test root must not be the registry's)", res.StatusCode, got)
	}
}

// checkDemoList: the demo's plugins.yaml lists the key on hello-managed and requires it.
func checkDemoList(t *testing.T, data string, key ed25519.PrivateKey) {
	t.Helper()
	l, probs, err := index.LoadList(filepath.Join(data, "demo", "plugins.yaml"))
	if err != nil || probs.HasErrors() {
		t.Fatalf("demo plugins.yaml: %v %v", err, probs)
	}
	e, ok := l.Plugin("hello-managed")
	if !ok || e.Signing == nil {
		t.Fatalf("demo plugins.yaml: hello-managed has no signing block: %+v", e)
	}
	pub := base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey))
	if diff := cmp.Diff(&index.Signing{Required: true, Ed25519Keys: []string{pub}}, e.Signing); diff != "" {
		t.Errorf("hello-managed signing (-want +got):\n%s", diff)
	}
	if s, _ := l.Plugin("slack-relay"); s == nil || s.Signing == nil || s.Signing.Sigstore == nil || s.Signing.Sigstore.Ref != "refs/tags/v*" {
		t.Errorf("slack-relay lost its sigstore identity: %+v", s)
	}
}

func TestWithEd25519Key(t *testing.T) {
	const pub = "Sl918btqFBMCOKMgumiaI0E7vC8aMAyG4wRZfqjZoBM="
	const other = "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="
	tests := []struct {
		name string
		src  string
		ok   bool
		want *index.Signing // of the entry "a" after the edit
	}{
		{"no signing block", "plugins:\n  - id: a\n    repo: o/a\n", true,
			&index.Signing{Required: true, Ed25519Keys: []string{pub}}},
		{"keys listed already", "plugins:\n  - id: a\n    repo: o/a\n    signing:\n      ed25519_keys: [" + other + "]\n", true,
			&index.Signing{Ed25519Keys: []string{other, pub}}},
		{"key present once", "plugins:\n  - id: a\n    repo: o/a\n    signing:\n      ed25519_keys: [" + pub + "]\n", true,
			&index.Signing{Ed25519Keys: []string{pub}}},
		{"sigstore kept", "plugins:\n  - id: a\n    repo: o/a\n    signing:\n      sigstore: {ref: refs/tags/v*}\n", true,
			&index.Signing{Ed25519Keys: []string{pub}, Sigstore: &index.SigstoreIdentity{Repository: "o/a", Ref: "refs/tags/v*", Issuer: index.DefaultIssuer}}},
		{"other entries untouched", "plugins:\n  - id: b\n    repo: o/b\n  - id: a\n    repo: o/a\n", true,
			&index.Signing{Required: true, Ed25519Keys: []string{pub}}},
		{"entry not listed", "plugins:\n  - id: b\n    repo: o/b\n", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, ok, err := withEd25519Key([]byte(tt.src), "a", pub)
			if err != nil || ok != tt.ok {
				t.Fatalf("ok = %v, err = %v; want ok %v", ok, err, tt.ok)
			}
			l, probs := index.ParseList(out)
			if len(probs) > 0 { // a repeated key is a warning: the demo's list must lint clean
				t.Fatalf("the edited list has problems: %v\n%s", probs, out)
			}
			if !tt.ok {
				if string(out) != tt.src {
					t.Errorf("a list without the entry changed:\n%s", out)
				}
				return
			}
			a, _ := l.Plugin("a")
			if diff := cmp.Diff(tt.want, a.Signing); diff != "" {
				t.Errorf("signing (-want +got):\n%s\n%s", diff, out)
			}
			if b, ok := l.Plugin("b"); ok && b.Signing != nil {
				t.Errorf("entry b got a signing block: %+v", b.Signing)
			}
		})
	}
}

// TestDemoRefusesAMalformedKey: a damaged key file stops the start with its path and the
// fix, rather than being replaced silently.
func TestDemoRefusesAMalformedKey(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(filepath.Join(data, "demo"), 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(data, "demo", "ed25519.key")
	if err := os.WriteFile(path, []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, _ := testCLI(nil)
	_, _, err := startDemo(c, Config{DataDir: data, PluginsPath: "../../plugins.yaml"})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "delete it") {
		t.Errorf("err = %v, want one naming %s and the fix", err, path)
	}
	if raw, _ := os.ReadFile(path); string(raw) != "not a key\n" {
		t.Errorf("the damaged key file was replaced: %q", raw)
	}
}

// TestDemoReloadKeepsTheKey: a reload rewrites the demo's plugins.yaml from --plugins, so an
// edit takes effect and the demo key stays listed.
func TestDemoReloadKeepsTheKey(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "plugins.yaml")
	orig, err := os.ReadFile("../../plugins.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(list, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	addr, _, stop := serveDemoList(t, data, list)
	defer stop()
	edited := strings.Replace(string(orig), "    categories: [analytics]\n", "    categories: [analytics, tools]\n", 1)
	if edited == string(orig) {
		t.Fatal("plugins.yaml has no pr-insights categories line to edit")
	}
	if err := os.WriteFile(list, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if st := adminPost(t, addr, "/api/v1/admin/reload"); st != http.StatusOK {
		t.Fatalf("reload: %d", st)
	}
	l, probs, err := index.LoadList(filepath.Join(data, "demo", "plugins.yaml"))
	if err != nil || probs.HasErrors() {
		t.Fatalf("demo plugins.yaml after reload: %v %v", err, probs)
	}
	if p, _ := l.Plugin("pr-insights"); p == nil || !cmp.Equal(p.Categories, []string{"analytics", "tools"}) {
		t.Errorf("the reload did not rewrite the demo plugins.yaml from --plugins: %+v", p)
	}
	checkDemoList(t, data, demoKey(t, data))
}

// TestServeDemoFinishesAnInterruptedFirstStart: a data directory holding some of the
// demo's own releases (a first start stopped part-way) gets the rest at the next
// `serve --demo`; one holding a release anybody else published is left as it is.
func TestServeDemoFinishesAnInterruptedFirstStart(t *testing.T) {
	countPlugins := func(addr string) int {
		var doc struct{ Plugins []struct{ ID string } }
		if err := json.Unmarshal(demoGet(t, addr, "/index.json"), &doc); err != nil {
			t.Fatal(err)
		}
		return len(doc.Plugins)
	}
	for _, tt := range []struct {
		by   string
		want int
	}{{demoActor, 4}, {"someone", 1}} {
		t.Run(tt.by, func(t *testing.T) {
			data := mustDemoStore(t) // hello-managed alone
			db, err := sql.Open("sqlite", store.SQLiteURI(filepath.Join(data, store.DBFile)))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("UPDATE releases SET published_by = ?", tt.by); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			addr, _, stop := serveDemo(t, data)
			defer stop()
			if got := countPlugins(addr); got < tt.want || (tt.want == 1 && got != 1) {
				t.Errorf("index.json lists %d plugins after serve --demo on a store whose release %s published, want %d", got, tt.by, tt.want)
			}
		})
	}
}

func TestDemoPending(t *testing.T) {
	rel := func(by string) *store.Release { return &store.Release{PublishedBy: by} }
	all := make([]*store.Release, len(examples.Names()))
	for i := range all {
		all[i] = rel(demoActor)
	}
	for _, tt := range []struct {
		name string
		rels []*store.Release
		want bool
	}{
		{"empty", nil, true},
		{"part of the demo", []*store.Release{rel(demoActor)}, true},
		{"the whole demo", all, false},
		{"another publisher's release", []*store.Release{rel(demoActor), rel("acme")}, false},
	} {
		if got := demoPending(tt.rels); got != tt.want {
			t.Errorf("%s: demoPending = %v, want %v", tt.name, got, tt.want)
		}
	}
}

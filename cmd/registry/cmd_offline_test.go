package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// MustStore opens the store of dir for a test.
func MustStore(tb testing.TB, dir string) *store.Store {
	tb.Helper()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

// insertRelease stores id@version directly, as a release written by an older registry
// (before the limits at publish) is stored: no publish check runs.
func insertRelease(tb testing.TB, st *store.Store, id, version, kind, description string) {
	tb.Helper()
	sha, err := st.Blobs.Put([]byte(id + "@" + version))
	if err != nil {
		tb.Fatal(err)
	}
	manifest := "id: " + id + "\napi_version: 2\nversion: \"" + version + "\"\ndisplay_name: Poison\ndescription: " + description +
		"\nauthor: Mallory\ncategories: [tools]\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	rel := &store.Release{PackageID: id, Version: version, Kind: kind, SHA256: sha, Size: int64(len(id + "@" + version)),
		Manifest: []byte(manifest), PublishedBy: "older-registry"}
	if _, err := st.InsertRelease(context.Background(), rel, store.AuditEntry{Actor: "test", Action: "publish", Target: id + "@" + version, Outcome: "ok"}); err != nil {
		tb.Fatal(err)
	}
}

func TestOfflineCommandsHelp(t *testing.T) {
	for name, cmd := range map[string]func(context.Context, *cli, []string) int{"yank": cmdYank, "unyank": cmdUnyank, "delist": cmdDelist} {
		t.Run(name, func(t *testing.T) {
			c, out, _ := testCLI(nil)
			if code := cmd(context.Background(), c, []string{"--help"}); code != exitOK {
				t.Errorf("--help exit = %d, want 0", code)
			}
			if !strings.Contains(out.String(), "usage: registry "+name) || !strings.Contains(out.String(), "--data DIR") {
				t.Errorf("--help does not show the usage and flags:\n%s", out)
			}
		})
	}
}

func TestOfflineCommandErrors(t *testing.T) {
	data := t.TempDir()
	st := MustStore(t, data)
	insertRelease(t, st, "acme-hello", "1.0.0", "plugin", "fine")
	_ = st.Close()
	tests := []struct {
		name string
		cmd  func(context.Context, *cli, []string) int
		args []string
		code int
		want string
	}{
		{"no release", cmdYank, []string{"--data", data}, exitUsage, "expected one ID@VERSION"},
		{"no version", cmdYank, []string{"--data", data, "acme-hello"}, exitUsage, "expected one ID@VERSION"},
		{"empty version", cmdUnyank, []string{"--data", data, "acme-hello@"}, exitUsage, "expected one ID@VERSION"},
		{"no database", cmdYank, []string{"--data", t.TempDir(), "acme-hello@1.0.0"}, exitUsage, "no registry database"},
		{"unknown flag", cmdYank, []string{"--data", data, "--force", "acme-hello@1.0.0"}, exitUsage, "-force"},
		{"not stored", cmdYank, []string{"--data", data, "acme-hello@2.0.0"}, exitInvalid, "stored versions of acme-hello: 1.0.0"},
		{"unknown id", cmdUnyank, []string{"--data", data, "nobody@1.0.0"}, exitInvalid, `no version of "nobody" is stored`},
		{"delist unknown", cmdDelist, []string{"--data", data, "nobody"}, exitInvalid, "no release left to yank"},
		{"delist two", cmdDelist, []string{"--data", data, "a", "b"}, exitUsage, "expected one package ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, errOut := testCLI(nil)
			if code := tt.cmd(context.Background(), c, tt.args); code != tt.code {
				t.Errorf("exit = %d, want %d; stderr: %s", code, tt.code, errOut)
			}
			if !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("stderr does not say %q:\n%s", tt.want, errOut)
			}
		})
	}
}

func TestSplitRelease(t *testing.T) {
	tests := []struct {
		in          string
		id, version string
		ok          bool
	}{
		{"acme-hello@1.2.0", "acme-hello", "1.2.0", true},
		{"@acme/ext@0.3.0-rc.1", "@acme/ext", "0.3.0-rc.1", true},
		{"@acme/ext", "", "", false},
		{"acme-hello", "", "", false},
		{"acme-hello@", "", "", false},
	}
	for _, tt := range tests {
		id, version, ok := splitRelease([]string{tt.in})
		if id != tt.id || version != tt.version || ok != tt.ok {
			t.Errorf("splitRelease(%q) = %q, %q, %v; want %q, %q, %v", tt.in, id, version, ok, tt.id, tt.version, tt.ok)
		}
	}
}

// yank, unyank and delist change the database through the store and audit as "cli".
func TestOfflineYankUnyankDelist(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	st := MustStore(t, data)
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		insertRelease(t, st, "acme-hello", v, "plugin", "fine")
	}
	_ = st.Close()
	steps := []struct {
		cmd  func(context.Context, *cli, []string) int
		args []string
		want map[string]string // version → yank reason, "" when not yanked
	}{
		{cmdYank, []string{"acme-hello@2.0.0", "--reason", "poisons the index"}, map[string]string{"1.0.0": "", "1.1.0": "", "2.0.0": "poisons the index"}},
		{cmdUnyank, []string{"acme-hello@2.0.0"}, map[string]string{"1.0.0": "", "1.1.0": "", "2.0.0": ""}},
		{cmdYank, []string{"acme-hello@1.0.0"}, map[string]string{"1.0.0": "-", "1.1.0": "", "2.0.0": ""}},
		{cmdDelist, []string{"acme-hello", "--reason", "abusive"}, map[string]string{"1.0.0": "-", "1.1.0": "abusive", "2.0.0": "abusive"}},
	}
	for i, step := range steps {
		c, out, errOut := testCLI(nil)
		if code := step.cmd(ctx, c, append([]string{"--data", data}, step.args...)); code != exitOK {
			t.Fatalf("step %d %v: exit %d; stderr: %s", i, step.args, code, errOut)
		}
		if out.String() == "" {
			t.Errorf("step %d %v printed nothing", i, step.args)
		}
		st := MustStore(t, data)
		rels, err := st.Releases(ctx, "acme-hello")
		_ = st.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range rels {
			switch {
			case !r.Yanked:
				got[r.Version] = ""
			case r.YankReason == "":
				got[r.Version] = "-"
			default:
				got[r.Version] = r.YankReason
			}
		}
		if diff := cmp.Diff(step.want, got); diff != "" {
			t.Errorf("step %d %v: yanked (-want +got):\n%s", i, step.args, diff)
		}
	}
	st = MustStore(t, data)
	defer st.Close()
	log, err := st.AuditLog(ctx, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range log {
		if e.Actor == "cli" {
			got = append(got, e.Action+" "+e.Target)
		}
	}
	want := []string{"unyank acme-hello@2.0.0", "yank acme-hello@1.0.0", "yank acme-hello@1.1.0", "yank acme-hello@2.0.0", "yank acme-hello@2.0.0"}
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit entries by cli (-want +got):\n%s", diff)
	}
}

// runServe starts `registry serve` with args and waits for it to answer; stop ends it and
// checks that it exited cleanly.
func runServe(t *testing.T, addr string, args ...string) (stop func()) {
	t.Helper()
	c, _, errOut := testCLI(map[string]string{"REGISTRY_ADMIN_TOKEN": "admin-secret"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- cmdServe(ctx, c, append([]string{"--addr", addr}, args...)) }()
	for i := 0; ; i++ {
		res, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			res.Body.Close()
			break
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d before answering; stderr: %s", code, errOut)
		case <-time.After(100 * time.Millisecond):
		}
		if i == 300 {
			t.Fatalf("serve did not answer in 30 s; stderr: %s", errOut)
		}
	}
	return func() {
		t.Helper()
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("serve exit = %d; stderr: %s", code, errOut)
		}
	}
}

type readyState struct {
	Code   int `json:"-"`
	Ready  bool
	State  string `json:"status"`
	Checks map[string]string
	Index  struct{ Source, Reason string }
}

func getReady(t *testing.T, addr string) readyState {
	t.Helper()
	res, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	r := readyState{Code: res.StatusCode}
	if err := json.NewDecoder(res.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	return r
}

func getBody(t *testing.T, url string) []byte {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, res.StatusCode, err)
	}
	return b
}

// The whole recovery: a stored release that makes the index exceed the host cap no longer
// stops `registry serve`; it serves the last good index and says why, and after the
// operator yanks the release offline, the next start is healthy again.
func TestRecoverFromRefusedIndexOffline(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	addr := freeAddr(t)
	stop := runServe(t, addr, "--demo", "--data", data, "--plugins", "../../plugins.yaml")
	good := getBody(t, "http://"+addr+"/index.json")
	goodCurupira := getBody(t, "http://"+addr+"/curupira/index.json")
	stop()
	var doc struct {
		Plugins []struct{ ID, Kind, Version string }
	}
	if err := json.Unmarshal(good, &doc); err != nil || len(doc.Plugins) == 0 {
		t.Fatalf("demo index: %v %s", err, good)
	}
	victim := doc.Plugins[0]

	st := MustStore(t, data)
	insertRelease(t, st, victim.ID, "9.9.9", victim.Kind, strings.Repeat("a", 6<<20))
	_ = st.Close()

	stop = runServe(t, addr, "--data", data, "--plugins", "../../plugins.yaml")
	if got := getBody(t, "http://"+addr+"/index.json"); string(got) != string(good) {
		t.Errorf("index.json after the refused rebuild is not the last good one (%d bytes, want %d)", len(got), len(good))
	}
	if got := getBody(t, "http://"+addr+"/curupira/index.json"); string(got) != string(goodCurupira) {
		t.Errorf("curupira index after the refused rebuild is not the last good one:\n%s\nwant\n%s", got, goodCurupira)
	}
	r := getReady(t, addr)
	if r.Code != http.StatusOK || r.State != "degraded" || r.Index.Source != "last-good" || !strings.Contains(r.Index.Reason, victim.ID+"@9.9.9") ||
		!strings.Contains(r.Checks["index"], "last good") {
		t.Errorf("readyz on poisoned data: %+v; want 200, degraded, last-good and the release at fault in the reason", r)
	}
	getBody(t, "http://"+addr+"/plugins/"+victim.ID)
	stop()

	c, out, errOut := testCLI(nil)
	if code := cmdYank(context.Background(), c, []string{"--data", data, "--reason", "over the index cap", victim.ID + "@9.9.9"}); code != exitOK {
		t.Fatalf("yank exit %d: %s", code, errOut)
	}
	if !strings.Contains(out.String(), "yanked "+victim.ID+"@9.9.9") {
		t.Errorf("yank output: %s", out)
	}

	stop = runServe(t, addr, "--data", data, "--plugins", "../../plugins.yaml")
	defer stop()
	r = getReady(t, addr)
	if r.Code != http.StatusOK || r.State != "ok" || r.Index.Source != "built" || r.Index.Reason != "" {
		t.Errorf("readyz after the offline yank: %+v; want 200, ok, built", r)
	}
	if err := json.Unmarshal(getBody(t, "http://"+addr+"/index.json"), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Plugins[0].ID != victim.ID || doc.Plugins[0].Version != victim.Version {
		t.Errorf("after the yank the index lists %s@%s, want %s@%s again", doc.Plugins[0].ID, doc.Plugins[0].Version, victim.ID, victim.Version)
	}
	if _, err := os.Stat(filepath.Join(data, "index", "last-good", "documents.json")); err != nil {
		t.Errorf("no last good record after a successful start: %v", err)
	}
}

// While `registry serve` holds the data directory, the offline commands refuse and change
// nothing: the running server would not rebuild its index after a change behind its back.
func TestOfflineCommandsRefuseWhileServeRuns(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	st := MustStore(t, data)
	insertRelease(t, st, "acme-hello", "1.0.0", "plugin", "fine")
	_ = st.Close()
	stop := runServe(t, freeAddr(t), "--data", data, "--plugins", "../../plugins.yaml")
	for name, cmd := range map[string]func(context.Context, *cli, []string) int{"yank": cmdYank, "delist": cmdDelist} {
		arg := map[string]string{"yank": "acme-hello@1.0.0", "delist": "acme-hello"}[name]
		c, _, errOut := testCLI(nil)
		if code := cmd(ctx, c, []string{"--data", data, arg}); code != exitInvalid {
			t.Errorf("%s while serve runs: exit %d, want %d; stderr: %s", name, code, exitInvalid, errOut)
		}
		if !strings.Contains(errOut.String(), "registry.lock") || !strings.Contains(errOut.String(), "API") {
			t.Errorf("%s while serve runs does not name the lock and the API: %s", name, errOut)
		}
	}
	stop()
	st = MustStore(t, data)
	defer st.Close()
	if r, err := st.Release(ctx, "acme-hello", "1.0.0"); err != nil || r.Yanked {
		t.Errorf("release changed by a refused command: %+v %v", r, err)
	}
	c, _, errOut := testCLI(nil)
	if code := cmdYank(ctx, c, []string{"--data", data, "acme-hello@1.0.0"}); code != exitOK {
		t.Errorf("yank once serve stopped: exit %d; stderr: %s", code, errOut)
	}
}

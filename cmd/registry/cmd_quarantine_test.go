package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pluginyard/registry/store"
)

func TestQuarantineCommand(t *testing.T) {
	data := t.TempDir()
	st := MustStore(t, data)
	insertMinRelease(t, st, "acme-hello", "1.0.0", "0.91.1")
	_ = st.Close()
	long := strings.Repeat("x", 501)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no subcommand", nil, exitUsage, "expected a subcommand: set, release or list"},
		{"unknown subcommand", []string{"lift"}, exitUsage, `unknown subcommand "lift"`},
		{"help", []string{"--help"}, exitOK, "usage: registry quarantine set"},
		{"no target", []string{"set", "--data", data, "--reason", "x"}, exitUsage, "expected one ID or ID@VERSION"},
		{"empty version", []string{"set", "--data", data, "--reason", "x", "acme-hello@"}, exitUsage, "expected one ID or ID@VERSION"},
		{"no reason", []string{"set", "--data", data, "acme-hello"}, exitInvalid, "[quarantine.reason] reason"},
		{"reason too long", []string{"set", "--data", data, "--reason", long, "acme-hello"}, exitInvalid, "the limit is 500"},
		{"not stored", []string{"set", "--data", data, "--reason", "x", "acme-hello@2.0.0"}, exitInvalid, "stored versions of acme-hello: 1.0.0"},
		{"list empty", []string{"list", "--data", data}, exitOK, "nothing is quarantined"},
		{"set package", []string{"set", "--data", data, "--reason", "malware report", "acme-hello"}, exitOK, "quarantined acme-hello:"},
		{"set release", []string{"set", "--data", data, "--reason", "steals tokens", "acme-hello@1.0.0"}, exitOK, "quarantined acme-hello@1.0.0:"},
		{"list", []string{"list", "--data", data}, exitOK, "acme-hello@1.0.0"},
		{"list json", []string{"list", "--json", "--data", data}, exitOK, `"reason": "malware report"`},
		{"release package", []string{"release", "--data", data, "acme-hello"}, exitOK, "released the quarantine of acme-hello:"},
		{"release again", []string{"release", "--data", data, "acme-hello"}, exitOK, "acme-hello is not quarantined; nothing changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, out, errOut := testCLI(nil)
			code := cmdQuarantine(context.Background(), c, tt.args)
			all := out.String() + errOut.String()
			if code != tt.code || !strings.Contains(all, tt.want) {
				t.Errorf("exit %d, output:\n%s\nwant exit %d and %q", code, all, tt.code, tt.want)
			}
		})
	}
	c, out, errOut := testCLI(nil)
	if code := cmdFsck(context.Background(), c, []string{"--data", data}); code != exitOK {
		t.Errorf("fsck with a quarantine in force: exit %d\n%s%s", code, out, errOut)
	}
	st = MustStore(t, data)
	defer st.Close()
	qs, err := st.Quarantines(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 1 || qs[0].Target() != "acme-hello@1.0.0" || qs[0].Reason != "steals tokens" || qs[0].SetBy != "cli" {
		t.Errorf("quarantines in force = %+v, want acme-hello@1.0.0 by cli", qs)
	}
	log, err := st.AuditLog(context.Background(), 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range log {
		if strings.Contains(e.Action, "quarantine") {
			actions = append(actions, e.Action+" "+e.Target+" "+e.Actor)
		}
	}
	if got := strings.Join(actions, ", "); got != "unquarantine acme-hello cli, quarantine acme-hello@1.0.0 cli, quarantine acme-hello cli" {
		t.Errorf("audit: %s", got)
	}
}

func TestQuarantineSplitTarget(t *testing.T) {
	tests := []struct{ arg, id, version string }{
		{"acme-hello", "acme-hello", ""},
		{"acme-hello@1.2.0", "acme-hello", "1.2.0"},
		{"@acme/ext", "@acme/ext", ""},
		{"@acme/ext@0.3.0", "@acme/ext", "0.3.0"},
	}
	for _, tt := range tests {
		id, v, ok := splitTarget([]string{tt.arg})
		if !ok || id != tt.id || v != tt.version {
			t.Errorf("splitTarget(%q) = %q, %q, %v; want %q, %q", tt.arg, id, v, ok, tt.id, tt.version)
		}
	}
	for _, bad := range [][]string{nil, {""}, {"acme-hello@"}, {"@acme/ext@"}, {"acme-hello", "acme-other"}} {
		if id, v, ok := splitTarget(bad); ok {
			t.Errorf("splitTarget(%q) = %q, %q, true; want refused", bad, id, v)
		}
	}
}

// TestQuarantineCommandRefusesWhileServing: set and release change the data directory
// offline only; list runs beside the server.
func TestQuarantineCommandRefusesWhileServing(t *testing.T) {
	data := t.TempDir()
	st := MustStore(t, data)
	insertMinRelease(t, st, "acme-hello", "1.0.0", "0.91.1")
	_ = st.Close()
	lock, err := lockDataDir(data, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	for _, args := range [][]string{{"set", "--data", data, "--reason", "x", "acme-hello"}, {"release", "--data", data, "acme-hello"}} {
		c, _, errOut := testCLI(nil)
		if code := cmdQuarantine(context.Background(), c, args); code != exitInvalid {
			t.Errorf("%v: exit %d while the directory is held (%s), want %d", args, code, errOut, exitInvalid)
		}
	}
	c, out, _ := testCLI(nil)
	if code := cmdQuarantine(context.Background(), c, []string{"list", "--data", data}); code != exitOK {
		t.Errorf("list while serving: exit %d (%s)", code, out)
	}
}

// TestQuarantineHelpIsTrue: `quarantine -h` shows each subcommand's flags and an example.
func TestQuarantineHelpIsTrue(t *testing.T) {
	c, out, _ := testCLI(nil)
	if code := cmdQuarantine(context.Background(), c, []string{"-h"}); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, w := range []string{"--data DIR", "--reason TEXT", "--json", "registry quarantine release [--registry URL | --data DIR] ID[@VERSION]", "--registry URL", "registry quarantine list --data /var/lib/registry"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("help lacks %q:\n%s", w, out)
		}
	}
}

// TestQuarantineCommandOnline runs set, list and release against a running `registry
// serve` with the admin token: the change is in force at once, a refusal names its rule.
func TestQuarantineCommandOnline(t *testing.T) {
	data := t.TempDir()
	st := MustStore(t, data)
	insertMinRelease(t, st, "acme-hello", "1.0.0", "0.91.1")
	_ = st.Close()
	url := "http://" + startServe(t, data)
	admin := map[string]string{"REGISTRY_TOKEN": "lock-test-admin"}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string
	}{
		{"no token", nil, []string{"set", "--registry", url, "--reason", "x", "acme-hello"}, exitUsage, "REGISTRY_TOKEN is empty"},
		{"not admin", map[string]string{"REGISTRY_TOKEN": "pyr_wrong"}, []string{"set", "--registry", url, "--reason", "x", "acme-hello"}, exitInvalid, "HTTP 401"},
		{"no reason", admin, []string{"set", "--registry", url, "acme-hello"}, exitInvalid, "quarantine.reason"},
		{"set", admin, []string{"set", "--registry", url, "--reason", "malware report", "acme-hello@1.0.0"}, exitOK, "quarantined acme-hello@1.0.0: it is out of the index and its downloads answer 410 now"},
		{"list", admin, []string{"list", "--registry", url}, exitOK, "acme-hello@1.0.0"},
		{"release", admin, []string{"release", "--registry", url, "acme-hello@1.0.0"}, exitOK, "released the quarantine of acme-hello@1.0.0: it is back in the index now"},
		{"release again", admin, []string{"release", "--registry", url, "acme-hello@1.0.0"}, exitOK, "not quarantined; nothing changed"},
		{"list empty", admin, []string{"list", "--registry", url}, exitOK, "nothing is quarantined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, out, errOut := testCLI(tt.env)
			code := cmdQuarantine(context.Background(), c, tt.args)
			all := out.String() + errOut.String()
			if code != tt.code || !strings.Contains(all, tt.want) {
				t.Errorf("exit %d, output:\n%s\nwant exit %d and %q", code, all, tt.code, tt.want)
			}
		})
	}
}

// Offline, quarantine and archive change the store --database and --blobs name, not only
// the one in --data: a database outside the data directory is the one changed.
func TestQuarantineAndArchiveHonourDatabaseFlag(t *testing.T) {
	dbDir, data := t.TempDir(), t.TempDir()
	st := MustStore(t, dbDir)
	insertMinRelease(t, st, "acme-hello", "1.0.0", "0.91.1")
	_ = st.Close()
	db := []string{"--data", data, "--database", "sqlite:" + filepath.Join(dbDir, store.DBFile), "--blobs", "file:" + filepath.Join(dbDir, "blobs")}
	for _, run := range []struct {
		name string
		cmd  func(context.Context, *cli, []string) int
		args []string
	}{
		{"quarantine set", cmdQuarantine, append([]string{"set", "--reason", "malware report"}, append(db, "acme-hello")...)},
		{"archive", cmdArchive, append(append([]string{}, db...), "acme-hello")},
	} {
		c, out, errOut := testCLI(nil)
		if code := run.cmd(context.Background(), c, run.args); code != exitOK {
			t.Fatalf("%s with --database: exit %d\n%s%s", run.name, code, out, errOut)
		}
	}
	st = MustStore(t, dbDir)
	defer st.Close()
	qs, err := st.Quarantines(context.Background())
	if err != nil || len(qs) != 1 {
		t.Errorf("quarantines in the --database store: %+v, %v; want one", qs, err)
	}
	p, err := st.Package(context.Background(), "acme-hello")
	if err != nil || p.ArchivedAt == nil {
		t.Errorf("the package in the --database store: %+v, %v; want archived", p, err)
	}
}

// TestRemoteAndLocalRefused: archive, unarchive and quarantine set, release and list refuse
// --data, --database or --blobs given beside a registry named by REGISTRY_URL or --registry,
// before asking it or opening the store; an explicit --registry beside REGISTRY_DATA asks
// the registry.
func TestRemoteAndLocalRefused(t *testing.T) {
	data := t.TempDir()
	st := MustStore(t, data)
	insertMinRelease(t, st, "acme-hello", "1.0.0", "0.91.1")
	_ = st.Close()
	var (
		mu    sync.Mutex
		asked []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"acme-hello","package_id":"acme-hello","changed":true,"released":true,"quarantines":[]}`))
	}))
	defer srv.Close()
	commands := []struct {
		name       string
		cmd        func(context.Context, *cli, []string) int
		sub, trail []string // the arguments before the flags and after them
	}{
		{"archive", cmdArchive, nil, []string{"acme-hello"}},
		{"unarchive", cmdUnarchive, nil, []string{"acme-hello"}},
		{"quarantine set", cmdQuarantine, []string{"set"}, []string{"--reason", "test", "acme-hello"}},
		{"quarantine release", cmdQuarantine, []string{"release"}, []string{"acme-hello"}},
		{"quarantine list", cmdQuarantine, []string{"list"}, nil},
	}
	argsOf := func(sub []string, flags ...[]string) []string {
		args := append([]string{}, sub...)
		for _, f := range flags {
			args = append(args, f...)
		}
		return args
	}
	locals := [][]string{
		{"--data", data},
		{"--database", "sqlite:" + filepath.Join(data, store.DBFile)},
		{"--blobs", "file:" + filepath.Join(data, "blobs")},
	}
	// REGISTRY_URL left in the shell, then --registry on the command line.
	remotes := []struct {
		env   map[string]string
		flags []string
		fix   string
	}{
		{map[string]string{"REGISTRY_URL": srv.URL, "REGISTRY_TOKEN": "t"}, nil, "unset REGISTRY_URL"},
		{map[string]string{"REGISTRY_TOKEN": "t"}, []string{"--registry", srv.URL}, "drop --registry"},
	}
	for _, cmd := range commands {
		for _, local := range locals {
			for _, remote := range remotes {
				asked = nil
				args := argsOf(cmd.sub, remote.flags, local, cmd.trail)
				c, _, errOut := testCLI(remote.env)
				code := cmd.cmd(context.Background(), c, args)
				msg := errOut.String()
				if code != exitUsage || !strings.Contains(msg, srv.URL) || !strings.Contains(msg, local[0]+" "+local[1]) ||
					!strings.Contains(msg, remote.fix) || !strings.Contains(msg, "drop "+local[0]) || len(asked) > 0 {
					t.Errorf("%s %v with %v: exit %d, stderr %q, asked %v; want %d naming both and the fix, the registry not asked",
						cmd.name, args, remote.env, code, msg, asked, exitUsage)
				}
			}
		}
		// An explicit --registry wins over REGISTRY_DATA from the environment.
		asked = nil
		args := argsOf(cmd.sub, []string{"--registry", srv.URL}, cmd.trail)
		c, _, errOut := testCLI(map[string]string{"REGISTRY_DATA": data, "REGISTRY_TOKEN": "t"})
		if code := cmd.cmd(context.Background(), c, args); code != exitOK || len(asked) != 1 {
			t.Errorf("%s %v beside REGISTRY_DATA: exit %d (%s), asked %v; want 0 and the registry asked", cmd.name, args, code, errOut, asked)
		}
	}
	st = MustStore(t, data)
	defer st.Close()
	if qs, err := st.Quarantines(context.Background()); err != nil || len(qs) > 0 {
		t.Errorf("the local store was changed: quarantines %v, %v", qs, err)
	}
}

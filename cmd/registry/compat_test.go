package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pluginyard/registry/store"
)

// insertMinRelease stores id@version with min_kandev_version min, as insertRelease does.
func insertMinRelease(tb testing.TB, st *store.Store, id, version, min string) {
	tb.Helper()
	sha, err := st.Blobs.Put([]byte(id + "@" + version))
	if err != nil {
		tb.Fatal(err)
	}
	manifest := "id: " + id + "\napi_version: 2\nversion: \"" + version + "\"\ndisplay_name: Hello\ndescription: hi\nauthor: Acme\nmin_kandev_version: \"" + min +
		"\"\ncategories: [tools]\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	rel := &store.Release{PackageID: id, Version: version, Kind: "plugin", SHA256: sha, Size: int64(len(id + "@" + version)),
		Manifest: []byte(manifest), PublishedBy: "test"}
	if _, err := st.InsertRelease(context.Background(), rel, store.AuditEntry{Actor: "test", Action: "publish", Target: id + "@" + version, Outcome: "ok"}); err != nil {
		tb.Fatal(err)
	}
}

func TestCompatCommand(t *testing.T) {
	data := t.TempDir()
	st := MustStore(t, data)
	insertMinRelease(t, st, "acme-hello", "1.0.0", "0.91.1")
	_ = st.Close()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no subcommand", nil, exitUsage, "expected a subcommand: set or clear"},
		{"unknown subcommand", []string{"widen"}, exitUsage, `unknown subcommand "widen"`},
		{"help", []string{"--help"}, exitOK, "usage: registry compat set"},
		{"no release", []string{"set", "--data", data, "--max-kandev", "0.93.0", "--reason", "x"}, exitUsage, "expected one ID@VERSION"},
		{"below min", []string{"set", "--data", data, "--max-kandev", "0.90.0", "--reason", "x", "acme-hello@1.0.0"}, exitInvalid, "[compat.max_kandev.below_min] max_kandev"},
		{"malformed max", []string{"set", "--data", data, "--max-kandev", "0.93", "--reason", "x", "acme-hello@1.0.0"}, exitInvalid, "[compat.max_kandev.format] max_kandev"},
		{"no reason", []string{"set", "--data", data, "--max-kandev", "0.93.0", "acme-hello@1.0.0"}, exitInvalid, "[compat.reason] reason"},
		{"not stored", []string{"set", "--data", data, "--max-kandev", "0.93.0", "--reason", "x", "acme-hello@2.0.0"}, exitInvalid, "acme-hello@2.0.0 is not published"},
		{"set", []string{"set", "--data", data, "--max-kandev", "0.93.4", "--reason", "crashes on 0.94", "acme-hello@1.0.0"}, exitOK, "curated acme-hello@1.0.0 for Kandev up to 0.93.4"},
		{"clear", []string{"clear", "--data", data, "acme-hello@1.0.0"}, exitOK, "cleared the curation of acme-hello@1.0.0"},
		{"clear again", []string{"clear", "--data", data, "acme-hello@1.0.0"}, exitOK, "had no curation; nothing changed"},
		{"clear not stored", []string{"clear", "--data", data, "acme-hello@3.0.0"}, exitInvalid, "stored versions of acme-hello: 1.0.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, out, errOut := testCLI(nil)
			code := cmdCompat(context.Background(), c, tt.args)
			all := out.String() + errOut.String()
			if code != tt.code || !strings.Contains(all, tt.want) {
				t.Errorf("exit %d, output:\n%s\nwant exit %d and %q", code, all, tt.code, tt.want)
			}
		})
	}
	st = MustStore(t, data)
	defer st.Close()
	log, err := st.AuditLog(context.Background(), 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range log {
		if strings.HasPrefix(e.Action, "compat_") {
			actions = append(actions, e.Action+" "+e.Actor+" "+e.Outcome)
		}
	}
	if got := strings.Join(actions, ", "); got != "compat_clear cli ok, compat_set cli ok" {
		t.Errorf("audit: %s", got)
	}
}

// TestCompatHelpIsTrue: `compat -h` lists the flags each subcommand takes and an example of
// each, never "flags: none".
func TestCompatHelpIsTrue(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"set", "-h"}, {"clear", "-h"}} {
		c, out, _ := testCLI(nil)
		if code := cmdCompat(context.Background(), c, args); code != exitOK {
			t.Fatalf("compat %v: exit %d", args, code)
		}
		got := out.String()
		want := []string{"--data DIR", "usage: registry compat set", "\n       registry compat clear [--data DIR] ID@VERSION\n",
			"\n  registry compat clear --data /var/lib/registry acme-hello@1.2.0\n"}
		if args[0] != "clear" {
			want = append(want, "--max-kandev VERSION", "--reason TEXT")
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("compat %v help lacks %q:\n%s", args, w, got)
			}
		}
		if strings.Contains(got, "flags: none") {
			t.Errorf("compat %v help says flags: none:\n%s", args, got)
		}
	}
}

// TestCompatCommandRefusesWhileServing: like yank, it refuses a data directory a server holds.
func TestCompatCommandRefusesWhileServing(t *testing.T) {
	data := t.TempDir()
	st := MustStore(t, data)
	insertMinRelease(t, st, "acme-hello", "1.0.0", "0.91.1")
	_ = st.Close()
	lock, err := lockDataDir(data, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	c, _, errOut := testCLI(nil)
	if code := cmdCompat(context.Background(), c, []string{"set", "--data", data, "--max-kandev", "0.93.4", "--reason", "x", "acme-hello@1.0.0"}); code != exitInvalid {
		t.Errorf("exit %d while the directory is held (%s), want %d", code, errOut, exitInvalid)
	}
}

// TestHostCapsFlag: --host-caps is parsed at start; a table that breaks a rule stops the
// start naming each problem's rule and path.
func TestHostCapsFlag(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	good := filepath.Join(dir, "good.yaml")
	mustWriteFile(t, bad, "hosts:\n  - from: \"0.80.0\"\n    api_versions: [1, 7]\n")
	mustWriteFile(t, good, "hosts:\n  - from: \"0.0.0\"\n    api_versions: [1, 2]\n    canvases: true\n")
	cfg := &Config{HostCaps: bad}
	err := cfg.loadHostCaps()
	for _, want := range []string{"--host-caps " + bad, "hosts[0].from [host.caps.from]", "hosts[0].api_versions[1] [host.caps.api_version]"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad table: %v, want it to name %q", err, want)
		}
	}
	cfg = &Config{Addr: "127.0.0.1:8080", DataDir: t.TempDir(), HostCaps: bad}
	if err := cfg.validate(); err == nil || !strings.Contains(err.Error(), "[host.caps.api_version]") {
		t.Errorf("serve's validate with a bad table: %v, want it refused", err)
	}
	cfg = &Config{HostCaps: good}
	if err := cfg.loadHostCaps(); err != nil || cfg.hostCaps == nil || len(cfg.hostCaps.Hosts) != 1 {
		t.Errorf("good table: %v, %+v", err, cfg.hostCaps)
	}
	cfg = &Config{HostCaps: filepath.Join(dir, "missing.yaml")}
	if err := cfg.loadHostCaps(); err == nil || !strings.Contains(err.Error(), "--host-caps") {
		t.Errorf("missing file: %v", err)
	}
}

func mustWriteFile(tb testing.TB, path, data string) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		tb.Fatal(err)
	}
}

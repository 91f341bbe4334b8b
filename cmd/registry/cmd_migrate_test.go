package main

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/s3blob/s3test"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
)

// releaseList is every release of the registry in dir (or at url) as id@version sha256.
func releaseList(t *testing.T, url, dir string) []string {
	t.Helper()
	st, err := store.OpenURL(context.Background(), url, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rels, err := st.AllReleases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rels {
		out = append(out, r.PackageID+"@"+r.Version+" "+r.SHA256)
	}
	return out
}

func runMigrate(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	c, out, errOut := testCLI(nil)
	code = run(context.Background(), append([]string{"migrate"}, args...), c)
	return code, out.String(), errOut.String()
}

func TestMigrateSQLiteToSQLite(t *testing.T) {
	src := mustDemoStore(t)
	dst := filepath.Join(t.TempDir(), "copy")
	killed := filepath.Join(dst, "spool", "migrate-123") // what a killed migrate left
	if err := os.MkdirAll(filepath.Dir(killed), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(killed, []byte("half a blob"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runMigrate(t, "--from", "sqlite:"+src, "--to", "sqlite:"+dst)
	if code != exitOK {
		t.Fatalf("migrate: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(killed); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the spool file a killed migrate left is still there: %v", err)
	}
	for _, want := range []string{"migrate: blobs ", "migrate: rows of releases", "migrate: verified releases", "migrate: verify blobs "} {
		if !strings.Contains(errOut, want) {
			t.Errorf("progress on stderr lacks %q:\n%s", want, errOut)
		}
	}
	for _, want := range []string{"verified\n", "releases", "not copied (the first registry serve rebuilds them): ", "rows/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	want := releaseList(t, "sqlite:"+filepath.Join(src, store.DBFile), src)
	if diff := cmp.Diff(want, releaseList(t, "sqlite:"+filepath.Join(dst, store.DBFile), dst)); diff != "" {
		t.Errorf("releases after migrate (-source +copy):\n%s", diff)
	}
	code, out, errOut = runMigrate(t, "--from", "sqlite:"+src, "--to", "sqlite:"+dst)
	if code != exitOK || !strings.Contains(out, "(0 inserted by this run)") {
		t.Errorf("second migrate: exit %d, want 0 with nothing inserted\n%s%s", code, out, errOut)
	}
	assertServesCopy(t, dst)
}

// assertServesCopy starts serve on a migrated data directory: the search rows and index
// documents the copy left out are rebuilt, so the package is in index.json and found by a
// search.
func assertServesCopy(t *testing.T, dir string) {
	t.Helper()
	addr := startServe(t, dir)
	for _, path := range []string{"/index.json", "/api/v1/plugins?q=hello"} {
		res, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"hello-managed"`) {
			t.Errorf("GET %s on the copy: %d %v, want hello-managed in:\n%.400s", path, res.StatusCode, err, body)
		}
	}
	res, err := http.Get("http://" + addr + "/api/v1/plugins?q=zzzqqq")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if strings.Contains(string(body), `"hello-managed"`) {
		t.Errorf("a search for zzzqqq on the copy finds hello-managed: the query is not searched\n%.400s", body)
	}
}

// TestMigrateRoundTrip moves the embedded default to PostgreSQL and S3 and back with the
// command, on real servers.
func TestMigrateRoundTrip(t *testing.T) {
	src := mustDemoStore(t)
	pg := storetest.CreateDatabase(t, storetest.SharedPostgres(t))
	srv := s3test.Start(t)
	srv.SetEnv(t)
	bucket := srv.URL("registry")
	if code, _, errOut := runMigrate(t, "--from", "sqlite:"+src, "--to", pg, "--blobs", bucket); code != exitOK {
		t.Fatalf("migrate to PostgreSQL: exit %d\n%s", code, errOut)
	}
	back := filepath.Join(t.TempDir(), "back")
	code, out, errOut := runMigrate(t, "--from", pg, "--from-blobs", bucket, "--to", "sqlite:"+back)
	if code != exitOK {
		t.Fatalf("migrate back: exit %d\n%s", code, errOut)
	}
	if strings.Contains(out, "REDACTED") || strings.Contains(out, "secret") {
		t.Errorf("summary shows a credential:\n%s", out)
	}
	want := releaseList(t, "sqlite:"+filepath.Join(src, store.DBFile), src)
	if diff := cmp.Diff(want, releaseList(t, "sqlite:"+filepath.Join(back, store.DBFile), back)); diff != "" {
		t.Errorf("releases after the round trip (-source +copy):\n%s", diff)
	}
}

func TestMigrateUsage(t *testing.T) {
	src := mustDemoStore(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no --to", []string{"--from", "sqlite:" + src}, "--from URL and --to URL are required"},
		{"no source", []string{"--from", "sqlite:" + filepath.Join(src, "nothing"), "--to", "sqlite:" + t.TempDir()}, "no registry database at " + filepath.Join(src, "nothing", store.DBFile)},
		{"postgres without blobs", []string{"--from", "postgres://u@127.0.0.1:1/db", "--to", "sqlite:" + t.TempDir()}, "--from-blobs is required beside postgres://u@127.0.0.1:1/db"},
		{"bad blobs", []string{"--from", "sqlite:" + src, "--to", "sqlite:" + t.TempDir(), "--blobs", "ftp://x"}, `--blobs "ftp://x": want file:PATH or s3://`},
		{"argument", []string{"--from", "sqlite:" + src, "--to", "sqlite:x", "extra"}, `expected no argument, found "extra"`},
		{"batch", []string{"--from", "sqlite:" + src, "--to", "sqlite:x", "--batch", "0"}, "--batch 0: want at least 1 row"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runMigrate(t, tc.args...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want %d and one line with %q", code, errOut, exitUsage, tc.want)
			}
		})
	}
}

// TestMigrateRefusesConflict: into a registry with its own data the command exits 1 and
// names the rule, the table and the key.
func TestMigrateRefusesConflict(t *testing.T) {
	src, other := mustDemoStore(t), mustDemoStore(t)
	for _, dir := range []string{src, other} { // a token each: their audit rows differ
		c, _, errOut := testCLI(nil)
		if code := cmdToken(context.Background(), c, []string{"create", "--publisher", "acme", "--data", dir}); code != exitOK {
			t.Fatalf("token create: %d %s", code, errOut)
		}
	}
	code, _, errOut := runMigrate(t, "--from", "sqlite:"+src, "--to", "sqlite:"+other)
	if code != exitInvalid || !strings.Contains(errOut, store.RuleCopyConflict) || !strings.Contains(errOut, "table ") {
		t.Errorf("migrate into another registry: exit %d\n%s", code, errOut)
	}
}

// TestMigrateInterrupted: a cancelled context (SIGINT, through main's NotifyContext) ends
// the command with exit 1 and the advice to run it again.
func TestMigrateInterrupted(t *testing.T) {
	src := mustDemoStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, _, errOut := testCLI(nil)
	code := run(ctx, []string{"migrate", "--from", "sqlite:" + src, "--to", "sqlite:" + t.TempDir()}, c)
	if code != exitInvalid || !strings.Contains(errOut.String(), "interrupted; run the same command again to resume") {
		t.Errorf("interrupted migrate: exit %d\n%s", code, errOut)
	}
}

// TestMigrateMeetsTheLock holds a data directory as serve does: migrate from it, into it
// (as a SQLite end, or as the destination's --data) is refused with the lock's message,
// exit 1, and nothing is written into it.
func TestMigrateMeetsTheLock(t *testing.T) {
	held, src := mustDemoStore(t), mustDemoStore(t)
	empty := filepath.Join(t.TempDir(), "empty")
	lock, err := lockDataDir(empty, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	heldLock, err := lockDataDir(held, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer heldLock.Close()
	pid := strconv.Itoa(os.Getpid())
	for _, tt := range []struct {
		args []string
		flag string // the flag the refusal names
	}{
		{[]string{"--from", "sqlite:" + held, "--to", "sqlite:" + filepath.Join(t.TempDir(), "copy")}, "--from sqlite:" + held},
		{[]string{"--from", "sqlite:" + src, "--to", "sqlite:" + empty}, "--to sqlite:" + empty},
		{[]string{"--from", "sqlite:" + src, "--to", "sqlite:" + filepath.Join(empty, "other.db")}, "--to sqlite:" + filepath.Join(empty, "other.db")},
		{[]string{"--from", "sqlite:" + src, "--to", "sqlite:" + filepath.Join(t.TempDir(), "copy"), "--data", empty}, "--data " + empty},
	} {
		code, out, errOut := runMigrate(t, tt.args...)
		if code != exitInvalid || !strings.Contains(errOut, tt.flag+": ") || !strings.Contains(errOut, "held by process "+pid) || !strings.Contains(errOut, "stop it before migrating") {
			t.Errorf("migrate %v beside the lock: exit %d, stderr %q; want %d naming %s and pid %s", tt.args, code, errOut, exitInvalid, tt.flag, pid)
		}
		if out != "" {
			t.Errorf("migrate %v beside the lock printed a summary:\n%s", tt.args, out)
		}
	}
	for _, f := range []string{store.DBFile, "other.db"} {
		if _, err := os.Stat(filepath.Join(empty, f)); err == nil {
			t.Errorf("a refused migrate wrote %s into the held directory", f)
		}
	}
}

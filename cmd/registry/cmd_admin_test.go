package main

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pluginyard/registry/examples"
	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

// mustDemoStore makes a data directory with the examples published.
func mustDemoStore(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, probs, err := index.LoadList("../../plugins.yaml")
	if err != nil || probs.HasErrors() {
		t.Fatal(err, probs)
	}
	svc := ingest.New(st, l, ingest.Config{PublicURL: "http://x", Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits()}, slog.New(slog.DiscardHandler))
	t.Cleanup(svc.Close) // its background writes end before the test data is removed
	var buf bytes.Buffer
	if err := examples.Pack("hello-managed", &buf); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Publish(ctx, ingest.PublishInput{Package: &buf, Actor: ingest.Actor{Name: "t", Admin: true}}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestTokenCreateListRevoke(t *testing.T) {
	dir := mustDemoStore(t)
	ctx := context.Background()
	c, out, errOut := testCLI(nil)
	if code := cmdToken(ctx, c, []string{"create", "--publisher", "acme", "--expires", "90d", "--data", dir}); code != exitOK {
		t.Fatalf("create: %d %s", code, errOut)
	}
	secret := strings.TrimSpace(out.String())
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, err := ingest.NewAuthenticator(st, "").Authenticate(ctx, secret)
	if err != nil || a.Publisher != "acme" {
		t.Fatalf("new token does not authenticate: %+v %v", a, err)
	}
	c, out, _ = testCLI(nil)
	if code := cmdToken(ctx, c, []string{"list", "--data", dir}); code != exitOK || !strings.Contains(out.String(), "acme") {
		t.Fatalf("list: %d %s", code, out)
	}
	id := strings.Fields(strings.Split(out.String(), "\n")[1])[0]
	c, _, errOut = testCLI(nil)
	if code := cmdToken(ctx, c, []string{"revoke", id, "--data", dir}); code != exitOK {
		t.Fatalf("revoke: %d %s", code, errOut)
	}
	if _, err := ingest.NewAuthenticator(st, "").Authenticate(ctx, secret); err == nil {
		t.Fatal("revoked token still authenticates")
	}
	log, _ := st.AuditLog(ctx, 10, 0)
	var actions []string
	for _, e := range log {
		actions = append(actions, e.Action)
	}
	if !strings.Contains(strings.Join(actions, " "), "token.revoke token.create") {
		t.Errorf("audit actions = %v", actions)
	}
	c, _, _ = testCLI(nil)
	if code := cmdToken(ctx, c, []string{"create", "--data", dir}); code != exitUsage {
		t.Errorf("create without --publisher: %d", code)
	}
}

func TestBackupRestore(t *testing.T) {
	dir := mustDemoStore(t)
	ctx := context.Background()
	snap := filepath.Join(t.TempDir(), "snap.db")
	c, _, errOut := testCLI(nil)
	if code := cmdBackup(ctx, c, []string{"--data", dir, "--out", snap}); code != exitOK {
		t.Fatalf("backup: %d %s", code, errOut)
	}
	if code := cmdBackup(ctx, c, []string{"--data", dir, "--out", snap}); code != exitInvalid {
		t.Errorf("backup over an existing file: %d", code)
	}
	target := filepath.Join(t.TempDir(), "restored")
	c, out, errOut := testCLI(nil)
	if code := cmdRestore(ctx, c, []string{"--data", target, snap}); code != exitOK {
		t.Fatalf("restore: %d %s", code, errOut)
	}
	if !strings.Contains(out.String(), "missing") || strings.Contains(out.String(), "(s)") {
		t.Errorf("restore without blobs did not warn: %s", out)
	}
	st, err := store.Open(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rel, err := st.Release(ctx, "hello-managed", "1.0.0")
	if err != nil || rel.SHA256 == "" {
		t.Fatalf("restored release: %+v %v", rel, err)
	}
	c, _, _ = testCLI(nil)
	if code := cmdRestore(ctx, c, []string{"--data", target, snap}); code != exitInvalid {
		t.Errorf("restore over a live database without --force: %d", code)
	}
}

// TestTokenCreateExpiresBounds checks that --expires refuses a lifetime a time.Duration
// cannot hold (it wrapped: 200000d made a token that never expires, 99999999d one that
// expired in 2246) and any non-positive one, and creates no token for them.
func TestTokenCreateExpiresBounds(t *testing.T) {
	dir := mustDemoStore(t)
	ctx := context.Background()
	for _, expires := range []string{"200000d", "99999999d", "106752d", "0d", "-5d", "0s", "-1h", "99999999999999999999d"} {
		c, out, errOut := testCLI(nil)
		if code := cmdToken(ctx, c, []string{"create", "--publisher", "acme", "--expires", expires, "--data", dir}); code != exitUsage {
			t.Errorf("--expires %s: exit %d, want %d (stdout %q)", expires, code, exitUsage, out)
		}
		if !strings.Contains(errOut.String(), "--expires") {
			t.Errorf("--expires %s: the error does not name the flag: %s", expires, errOut)
		}
		if strings.HasSuffix(expires, "d") && !strings.HasPrefix(expires, "-") && expires != "0d" && !strings.Contains(errOut.String(), "106751d") {
			t.Errorf("--expires %s: the error does not give the limit: %s", expires, errOut)
		}
	}
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if toks, err := st.Tokens(ctx); err != nil || len(toks) != 0 {
		t.Fatalf("refused lifetimes made tokens: %+v %v", toks, err)
	}
	c, _, errOut := testCLI(nil)
	if code := cmdToken(ctx, c, []string{"create", "--publisher", "acme", "--expires", "106751d", "--data", dir}); code != exitOK {
		t.Fatalf("--expires 106751d (the longest): %d %s", code, errOut)
	}
	toks, err := st.Tokens(ctx)
	if err != nil || len(toks) != 1 || toks[0].ExpiresAt == nil || toks[0].ExpiresAt.Year() < 2300 {
		t.Fatalf("--expires 106751d: tokens %+v %v, want one expiring after 2300", toks, err)
	}
}

// TestBackupNamesWhatToKeep checks that backup's message names the blobs folder --blobs
// names (it named DATA/blobs whatever --blobs said), says a bucket is not copied, and
// names the log key, which the snapshot does not hold either.
func TestBackupNamesWhatToKeep(t *testing.T) {
	dir := mustDemoStore(t)
	ctx := context.Background()
	elsewhere := filepath.Join(t.TempDir(), "blobs")
	for _, tc := range []struct {
		blobs      string
		want, not  string
		bucketNote bool
	}{
		{blobs: "", want: filepath.Join(dir, "blobs")},
		{blobs: "file:" + elsewhere, want: elsewhere, not: filepath.Join(dir, "blobs")},
		{blobs: "s3://plugins?endpoint=127.0.0.1:9&region=r", want: "s3://plugins", not: filepath.Join(dir, "blobs"), bucketNote: true},
	} {
		args := []string{"--data", dir, "--out", filepath.Join(t.TempDir(), "snap.db")}
		if tc.blobs != "" {
			args = append(args, "--blobs", tc.blobs)
		}
		c, out, errOut := testCLI(nil)
		if code := cmdBackup(ctx, c, args); code != exitOK {
			t.Fatalf("backup --blobs %q: %d %s", tc.blobs, code, errOut)
		}
		msg := out.String()
		if !strings.Contains(msg, tc.want) || tc.not != "" && strings.Contains(msg, tc.not) {
			t.Errorf("backup --blobs %q: message %q, want %s and not %q", tc.blobs, msg, tc.want, tc.not)
		}
		if tc.bucketNote != strings.Contains(msg, "does not copy") {
			t.Errorf("backup --blobs %q: message %q: bucket note %v, want %v", tc.blobs, msg, !tc.bucketNote, tc.bucketNote)
		}
		if !strings.Contains(msg, filepath.Join(dir, "log.key")) {
			t.Errorf("backup --blobs %q: message %q does not name the log key", tc.blobs, msg)
		}
	}
}

// TestRestoreRefusesWhatIsNoSnapshot checks that restore --force checks the snapshot before
// it replaces the database: a garbage file wiped the registry ("file is not a database"),
// an empty one was "restored" as an empty registry. Each is refused, naming the file and
// what it is, the database keeps its release and token, and no temporary file is left.
func TestRestoreRefusesWhatIsNoSnapshot(t *testing.T) {
	dir := mustDemoStore(t)
	ctx := context.Background()
	c, _, errOut := testCLI(nil)
	if code := cmdToken(ctx, c, []string{"create", "--publisher", "acme", "--data", dir}); code != exitOK {
		t.Fatalf("token create: %d %s", code, errOut)
	}
	snaps := t.TempDir()
	garbage := filepath.Join(snaps, "garbage.db")
	if err := os.WriteFile(garbage, bytes.Repeat([]byte("not a database\n"), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(snaps, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(snaps, "other.db")
	db, err := sql.Open("sqlite", store.SQLiteURI(other))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE notes (body TEXT)"); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	for snap, want := range map[string]string{garbage: "not a SQLite database", empty: "empty", other: "not a registry's"} {
		c, out, errOut := testCLI(nil)
		if code := cmdRestore(ctx, c, []string{"--data", dir, "--force", snap}); code != exitInvalid {
			t.Errorf("restore %s: exit %d, want %d (stdout %q)", filepath.Base(snap), code, exitInvalid, out)
		}
		if msg := errOut.String(); !strings.Contains(msg, snap) || !strings.Contains(msg, want) || !strings.Contains(msg, "unchanged") {
			t.Errorf("restore %s: %q, want the file, %q and that the database is unchanged", filepath.Base(snap), msg, want)
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if strings.Contains(e.Name(), ".restore") {
				t.Errorf("restore %s left %s", filepath.Base(snap), e.Name())
			}
		}
		st, err := store.Open(ctx, dir)
		if err != nil {
			t.Fatalf("after restore %s the database does not open: %v", filepath.Base(snap), err)
		}
		rel, err := st.Release(ctx, "hello-managed", "1.0.0")
		if err != nil || rel.SHA256 == "" {
			t.Errorf("after restore %s: release %+v %v", filepath.Base(snap), rel, err)
		}
		if toks, err := st.Tokens(ctx); err != nil || len(toks) != 1 {
			t.Errorf("after restore %s: tokens %+v %v", filepath.Base(snap), toks, err)
		}
		_ = st.Close()
	}
	fresh := filepath.Join(t.TempDir(), "data")
	c, _, errOut = testCLI(nil)
	if code := cmdRestore(ctx, c, []string{"--data", fresh, garbage}); code != exitInvalid || !strings.Contains(errOut.String(), "nothing was restored") {
		t.Errorf("restore of garbage into a new data directory: %d %q, want %d and that nothing was restored", code, errOut, exitInvalid)
	}
	if _, err := os.Stat(filepath.Join(fresh, store.DBFile)); err == nil {
		t.Errorf("restore of garbage into a new data directory made %s", store.DBFile)
	}
}

// TestRestoreDatabaseFlag checks that restore puts the snapshot into the SQLite file
// --database or REGISTRY_DATABASE names (it wrote DATA/registry.db and said "restored"
// while the database serve uses stayed as it was), and refuses a PostgreSQL URL.
func TestRestoreDatabaseFlag(t *testing.T) {
	src := mustDemoStore(t)
	ctx := context.Background()
	snap := filepath.Join(t.TempDir(), "snap.db")
	c, _, errOut := testCLI(nil)
	if code := cmdBackup(ctx, c, []string{"--data", src, "--out", snap}); code != exitOK {
		t.Fatalf("backup: %d %s", code, errOut)
	}
	for _, viaEnv := range []bool{false, true} {
		data := filepath.Join(t.TempDir(), "data")
		dbFile := filepath.Join(t.TempDir(), "elsewhere", "reg.db")
		args := []string{"--data", data, snap}
		env := map[string]string{}
		if viaEnv {
			env["REGISTRY_DATABASE"] = "sqlite:" + dbFile
		} else {
			args = append([]string{"--database", "sqlite:" + dbFile}, args...)
		}
		c, out, errOut := testCLI(env)
		if code := cmdRestore(ctx, c, args); code != exitOK {
			t.Fatalf("restore (env %v): %d %s", viaEnv, code, errOut)
		}
		if !strings.Contains(out.String(), "into "+dbFile) {
			t.Errorf("restore (env %v) does not name %s: %s", viaEnv, dbFile, out)
		}
		if _, err := os.Stat(filepath.Join(data, store.DBFile)); err == nil {
			t.Errorf("restore (env %v) wrote %s rather than the --database file", viaEnv, store.DBFile)
		}
		st, err := store.OpenURL(ctx, "sqlite:"+dbFile, data)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := st.Release(ctx, "hello-managed", "1.0.0")
		_ = st.Close()
		if err != nil || rel.SHA256 == "" {
			t.Fatalf("restored release in %s (env %v): %+v %v", dbFile, viaEnv, rel, err)
		}
		c, _, _ = testCLI(env)
		if code := cmdRestore(ctx, c, args); code != exitInvalid {
			t.Errorf("restore over the --database file without --force (env %v): %d", viaEnv, code)
		}
	}
	data := filepath.Join(t.TempDir(), "data")
	c, out, errOut := testCLI(map[string]string{"REGISTRY_DATABASE": "postgres://u:secret@127.0.0.1:9/reg"})
	if code := cmdRestore(ctx, c, []string{"--data", data, "--force", snap}); code != exitUsage {
		t.Errorf("restore into PostgreSQL: %d, want %d (stdout %q)", code, exitUsage, out)
	}
	if msg := errOut.String(); !strings.Contains(msg, "pg_restore") || strings.Contains(msg, "secret") {
		t.Errorf("restore into PostgreSQL: %q, want pg_restore named and the password hidden", msg)
	}
	if _, err := os.Stat(data); err == nil {
		t.Errorf("restore into PostgreSQL made %s", data)
	}
}

// TestRestoreKeepsTheDatabasesOwner: the restored database has the mode, owner and group
// of the one it replaces (restore run as root left it root's, which the registry's user
// could not open).
func TestRestoreKeepsTheDatabasesOwner(t *testing.T) {
	dir := mustDemoStore(t)
	ctx := context.Background()
	snap := filepath.Join(t.TempDir(), "snap.db")
	c, _, errOut := testCLI(nil)
	if code := cmdBackup(ctx, c, []string{"--data", dir, "--out", snap}); code != exitOK {
		t.Fatalf("backup: %d %s", code, errOut)
	}
	db := filepath.Join(dir, store.DBFile)
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 { // only root can give a file away: then the test gives it to nobody
		uid, gid = 65534, 65534
		if err := os.Chown(db, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(db, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := cmdRestore(ctx, c, []string{"--data", dir, "--force", snap}); code != exitOK {
		t.Fatalf("restore: %d %s", code, errOut)
	}
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if fi.Mode().Perm() != 0o600 || int(st.Uid) != uid || int(st.Gid) != gid {
		t.Errorf("restored database: mode %v, owner %d:%d; want 0600, %d:%d", fi.Mode().Perm(), st.Uid, st.Gid, uid, gid)
	}
}

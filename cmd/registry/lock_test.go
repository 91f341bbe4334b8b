package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pluginyard/registry/store"
)

// startServe runs `registry serve` on data in this process until the test ends, and
// waits until it answers /readyz.
func startServe(t *testing.T, data string) string {
	t.Helper()
	addr, _ := startServeWith(t, data, "lock-test-admin")
	return addr
}

// startServeWith is startServe with adminToken as REGISTRY_ADMIN_TOKEN; it also returns
// serve's standard error (its log).
func startServeWith(t *testing.T, data, adminToken string) (string, *syncBuffer) {
	t.Helper()
	addr := freeAddr(t)
	c, _, errOut := testCLI(map[string]string{"REGISTRY_ADMIN_TOKEN": adminToken, "REGISTRY_OIDC_ISSUER": "off", "REGISTRY_SYNC_INTERVAL": "0"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", addr, "--data", data, "--plugins", "../../plugins.yaml"}, c)
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("serve exit = %d; stderr: %s", code, errOut)
		}
	})
	for range 200 {
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d: %s", code, errOut)
		default:
		}
		if res, err := http.Get("http://" + addr + "/readyz"); err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return addr, errOut
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("serve did not become ready: %s", errOut)
	return "", nil
}

// TestServeWarnsOfAShortAdminToken: a REGISTRY_ADMIN_TOKEN shorter than 32 characters is
// named in a warning with the fix; one of 32 is not.
func TestServeWarnsOfAShortAdminToken(t *testing.T) {
	for token, warned := range map[string]bool{"x": true, strings.Repeat("a", minAdminToken-1): true, strings.Repeat("a", minAdminToken): false} {
		_, errOut := startServeWith(t, t.TempDir(), token)
		want := fmt.Sprintf("REGISTRY_ADMIN_TOKEN is %d characters", len(token))
		if got := strings.Contains(errOut.String(), want) && strings.Contains(errOut.String(), "openssl rand -hex 32"); got != warned {
			t.Errorf("a %d-character admin token: warned %v, want %v; log:\n%s", len(token), got, warned, errOut)
		}
	}
}

// TestServeOwnsTheDataDirectory runs a registry and, beside it, a second serve and a
// restore (both refused, naming the pid that holds the directory; two opens in one process
// conflict like two processes) and the commands documented as safe beside serve.
func TestServeOwnsTheDataDirectory(t *testing.T) {
	data := mustDemoStore(t)
	snap := filepath.Join(t.TempDir(), "snap.db")
	c, _, errOut := testCLI(nil)
	if code := run(context.Background(), []string{"backup", "--data", data, "--out", snap}, c); code != exitOK {
		t.Fatalf("backup before serve: %d %s", code, errOut)
	}
	startServe(t, data)
	pid := strconv.Itoa(os.Getpid())

	t.Run("second serve refused", func(t *testing.T) {
		// Cancelled, so that a second serve wrongly let in stops instead of serving.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c, _, errOut := testCLI(map[string]string{"REGISTRY_ADMIN_TOKEN": "x", "REGISTRY_OIDC_ISSUER": "off"})
		code := run(ctx, []string{"serve", "--addr", freeAddr(t), "--data", data, "--plugins", "../../plugins.yaml"}, c)
		if code != exitInvalid || !strings.Contains(errOut.String(), "held by process "+pid) {
			t.Errorf("second serve: exit %d, stderr %q; want %d naming pid %s", code, errOut, exitInvalid, pid)
		}
	})
	t.Run("restore refused", func(t *testing.T) {
		before, err := os.ReadFile(filepath.Join(data, store.DBFile))
		if err != nil {
			t.Fatal(err)
		}
		c, _, errOut := testCLI(nil)
		code := run(context.Background(), []string{"restore", "--force", "--data", data, snap}, c)
		if code != exitInvalid || !strings.Contains(errOut.String(), "held by process "+pid) || !strings.Contains(errOut.String(), "stop it before restoring") {
			t.Errorf("restore beside serve: exit %d, stderr %q; want %d naming pid %s", code, errOut, exitInvalid, pid)
		}
		after, err := os.ReadFile(filepath.Join(data, store.DBFile))
		if err != nil || string(after) != string(before) {
			t.Errorf("a refused restore changed %s (%v)", store.DBFile, err)
		}
	})
	t.Run("token, pin and backup beside serve", func(t *testing.T) {
		ctx := context.Background()
		st, err := store.Open(ctx, data)
		if err != nil {
			t.Fatal(err)
		}
		_, err = st.PinOnFirstUse(ctx, store.Pin{Subject: "hello-managed", Repository: "acme/hello", RepositoryID: "1", OwnerID: "2", Source: "sigstore"})
		_ = st.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"token", "create", "--publisher", "acme", "--data", data},
			{"token", "list", "--data", data},
			{"pin", "show", "hello-managed", "--data", data},
			{"pin", "reset", "hello-managed", "--data", data},
			{"backup", "--data", data, "--out", filepath.Join(t.TempDir(), "beside.db")},
		} {
			c, _, errOut := testCLI(nil)
			if code := run(ctx, args, c); code != exitOK {
				t.Errorf("%v beside serve: exit %d, stderr %s", args, code, errOut)
			}
		}
	})
}

// TestRestoreAfterServeStops checks that the lock goes with the server.
func TestRestoreAfterServeStops(t *testing.T) {
	data := mustDemoStore(t)
	snap := filepath.Join(t.TempDir(), "snap.db")
	c, _, errOut := testCLI(nil)
	if code := run(context.Background(), []string{"backup", "--data", data, "--out", snap}, c); code != exitOK {
		t.Fatalf("backup: %d %s", code, errOut)
	}
	t.Run("serve", func(t *testing.T) { startServe(t, data) })
	c, _, errOut = testCLI(nil)
	if code := run(context.Background(), []string{"restore", "--force", "--data", data, snap}, c); code != exitOK {
		t.Fatalf("restore after serve stopped: exit %d, stderr %s", code, errOut)
	}
}

// TestHelpSaysWhatRunsBesideServe checks the help of the commands that share a data
// directory with serve, and of restore, which does not.
func TestHelpSaysWhatRunsBesideServe(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"token", "create", "-h"}, besideServe},
		{[]string{"token", "--help"}, besideServe},
		{[]string{"pin", "show", "-h"}, besideServe},
		{[]string{"backup", "-h"}, besideServe},
		{[]string{"restore", "-h"}, restoreNote},
	} {
		c, out, _ := testCLI(nil)
		_ = run(context.Background(), tt.args, c)
		if !strings.Contains(out.String(), tt.want) {
			t.Errorf("%v: help does not say %q:\n%s", tt.args, tt.want, out)
		}
	}
}

// TestDatabaseFlagMeetsTheLock holds a data directory as serve does and points the other
// commands at its registry.db through --database, with a --data of their own: an offline
// yank and a second serve are refused with the lock's message, and the database is
// unchanged. Once the directory is given up, a yank naming it both
// ways (--data and --database) takes it once and succeeds.
func TestDatabaseFlagMeetsTheLock(t *testing.T) {
	data := mustDemoStore(t)
	db := filepath.Join(data, store.DBFile)
	yanked := func() bool {
		t.Helper()
		st := MustStore(t, data)
		defer st.Close()
		rels, err := st.Releases(context.Background(), "hello-managed")
		if err != nil || len(rels) != 1 {
			t.Fatalf("releases of hello-managed: %v, %v", rels, err)
		}
		return rels[0].Yanked
	}
	lock, err := lockDataDir(data, "test")
	if err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(os.Getpid())
	// Cancelled, so that a serve wrongly let in stops instead of serving.
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	other := func() string { return filepath.Join(t.TempDir(), "other") }
	for _, tt := range []struct {
		ctx     context.Context
		args    []string
		flag    string // the flag the refusal names
		env     map[string]string
		wantOut string
	}{
		{context.Background(), []string{"yank", "--data", other(), "--database", "sqlite:" + db, "hello-managed@1.0.0"}, "--database sqlite:" + db, nil, "stop it before changing its database offline"},
		{stopped, []string{"serve", "--addr", freeAddr(t), "--data", other(), "--database", "sqlite:" + db, "--blobs", "file:" + filepath.Join(data, "blobs"), "--plugins", "../../plugins.yaml"},
			"--database sqlite:" + db, map[string]string{"REGISTRY_ADMIN_TOKEN": "x", "REGISTRY_OIDC_ISSUER": "off"}, "stop it before starting another registry"},
	} {
		c, _, errOut := testCLI(tt.env)
		code := run(tt.ctx, tt.args, c)
		msg := errOut.String()
		if code != exitInvalid || !strings.Contains(msg, tt.flag+": ") || !strings.Contains(msg, "held by process "+pid) || !strings.Contains(msg, tt.wantOut) {
			t.Errorf("%v beside the lock: exit %d, stderr %q; want %d naming %s, pid %s and %q", tt.args[0], code, msg, exitInvalid, tt.flag, pid, tt.wantOut)
		}
	}
	if yanked() {
		t.Error("the refused yank yanked hello-managed@1.0.0")
	}
	_ = lock.Close()
	c, _, errOut := testCLI(nil)
	if code := run(context.Background(), []string{"yank", "--data", data, "--database", "sqlite:" + db, "hello-managed@1.0.0"}, c); code != exitOK || !yanked() {
		t.Errorf("yank naming the directory twice: exit %d, stderr %s; want 0 and the release yanked", code, errOut)
	}
}

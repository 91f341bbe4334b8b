package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pluginyard/registry/store"
)

// TestServeRefusesUnfinishedCopy: a data directory `registry migrate` was interrupted in
// holds part of the catalogue and the blobs copied so far. serve refuses it, naming the
// source and the fix, before its sweep removes a blob; an offline command writing through
// the store refuses it too; and the same migrate command run again still finishes the copy,
// which then serves.
func TestServeRefusesUnfinishedCopy(t *testing.T) {
	src := mustDemoStore(t)
	dst := filepath.Join(t.TempDir(), "copy")
	srcBlobs, err := store.OpenFolder(filepath.Join(src, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	dstBlobs, err := store.OpenFolder(filepath.Join(dst, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	from := store.CopyEnd{Database: "sqlite:" + src, DataDir: src, Blobs: srcBlobs}
	to := store.CopyEnd{Database: "sqlite:" + dst, DataDir: dst, Blobs: dstBlobs}
	_, err = store.Copy(ctx, from, to, store.CopyOptions{BatchRows: 1, Progress: func(p store.CopyProgress) {
		if p.Phase == "rows" {
			cancel() // every blob is copied, and a row or so
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted copy: %v, want context.Canceled", err)
	}
	blobs, err := store.OpenBlobs(filepath.Join(dst, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	before, err := blobs.List()
	if err != nil || len(before) == 0 {
		t.Fatalf("blobs the interrupted copy left: %v, %v", before, err)
	}
	want := store.RuleUnfinishedCopy + ": this database is an unfinished copy of sqlite:" + filepath.Join(src, store.DBFile) +
		" made by `registry migrate`; run the same migrate command again to finish it (nothing may serve from it before it is verified)"

	c, _, errOut := testCLI(map[string]string{"REGISTRY_ADMIN_TOKEN": "admin-secret-of-at-least-32-characters"})
	args := []string{"--data", dst, "--plugins", "../../plugins.yaml", "--addr", freeAddr(t), "--oidc-issuer", "off", "--sync-interval", "0"}
	sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second) // a start not refused ends here
	defer scancel()
	if code := cmdServe(sctx, c, args); code != exitInvalid {
		t.Fatalf("serve: exit = %d, want %d; stderr: %s", code, exitInvalid, errOut)
	}
	if !strings.Contains(errOut.String(), want) {
		t.Errorf("serve's stderr does not say %q:\n%s", want, errOut)
	}
	after, err := blobs.List()
	if err != nil || len(after) != len(before) {
		t.Errorf("blobs after the refused start: %d (%v), want the %d the copy left", len(after), err, len(before))
	}

	c, _, errOut = testCLI(nil)
	if code := cmdYank(context.Background(), c, []string{"--data", dst, "acme-hello@1.0.0"}); code == exitOK || !strings.Contains(errOut.String(), want) {
		t.Errorf("yank on the unfinished copy: exit %d, want a refusal saying %q:\n%s", code, want, errOut)
	}

	code, out, stderr := runMigrate(t, "--from", "sqlite:"+src, "--to", "sqlite:"+dst)
	if code != exitOK || !strings.Contains(out, "verified (resumed)") {
		t.Fatalf("migrate run again: exit %d, want a verified resume\n%s%s", code, out, stderr)
	}
	assertServesCopy(t, dst)
}

package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// TestBackupInterrupted checks that a backup cancelled before it starts, or once VACUUM
// INTO has written the snapshot (a SIGINT then), leaves neither the target, which blocked
// the retry ("already exists") and which restore would take for a snapshot, nor a
// temporary file; and that the retry then writes the snapshot.
func TestBackupInterrupted(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := t.TempDir()
	snap := filepath.Join(out, "snap.db")
	onlySnap := func(want ...string) {
		t.Helper()
		ents, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range ents {
			got = append(got, e.Name())
		}
		if len(got) != len(want) || len(want) == 1 && got[0] != want[0] {
			t.Fatalf("the output folder holds %v, want %v", got, want)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Backup(ctx, snap); err == nil {
		t.Fatal("a backup with a cancelled context succeeded")
	}
	onlySnap()

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	backupWritten = cancel
	defer func() { backupWritten = nil }()
	if err := s.Backup(ctx, snap); err == nil {
		t.Fatal("a backup cancelled once the snapshot was written succeeded")
	}
	onlySnap()

	backupWritten = nil
	if err := s.Backup(context.Background(), snap); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	onlySnap("snap.db")
	db, err := sql.Open("sqlite", SQLiteURI(snap)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM schema_migrations").Scan(&n); err != nil || n == 0 {
		t.Fatalf("the retried snapshot: %d migrations, %v", n, err)
	}
	if err := s.Backup(context.Background(), snap); err == nil {
		t.Fatal("a backup over an existing snapshot succeeded")
	}
	onlySnap("snap.db")
}

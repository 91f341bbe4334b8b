package tamper

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/translog"
)

// TestReleaseSHA256Changed: the database says a listed release is another package's bytes
// (a swap after publication); the index follows the database, the log does not.
func TestReleaseSHA256Changed(t *testing.T) {
	r := startRegistry(t)
	state := filepath.Join(t.TempDir(), "audit.json")
	r.mustVerify(r.url, state)
	r.restart(func(db *sql.DB) {
		mustExec(t, db, `UPDATE releases SET (sha256, size) = (SELECT sha256, size FROM releases o WHERE o.package_id != releases.package_id AND o.kind = 'plugin' LIMIT 1)
			WHERE id = (SELECT MIN(id) FROM releases WHERE kind = 'plugin')`)
	})
	code, stderr := r.verify(r.url, state)
	assertCaught(t, code, stderr, "log.sha256", "the package was swapped after it was published")
}

// TestRecordsReordered: two records swapped in the database, hashes left alone: the data
// tiles no longer match the signed tree, even for an auditor with no state.
func TestRecordsReordered(t *testing.T) {
	r := startRegistry(t)
	r.restart(func(db *sql.DB) {
		unlockLog(t, db)
		swapRecords(t, db, 0, 1)
	})
	code, stderr := r.verify(r.url, filepath.Join(t.TempDir(), "fresh.json"))
	assertCaught(t, code, stderr, "log.record", "does not hash to leaf #0 of the signed tree")
}

// TestRecordDropped: a record removed, the rest moved up, the tree rehashed and re-signed
// (the registry then re-logs the release whose record went missing) and grown by a yank:
// an auditor that saw the log before finds no consistency proof to its checkpoint.
func TestRecordDropped(t *testing.T) {
	r := startRegistry(t)
	state := filepath.Join(t.TempDir(), "audit.json")
	r.mustVerify(r.url, state)
	r.restart(func(db *sql.DB) {
		unlockLog(t, db)
		mustExec(t, db, "DELETE FROM log_records WHERE idx = 1")
		mustExec(t, db, "UPDATE log_records SET idx = idx + 1000000 WHERE idx > 1")
		mustExec(t, db, "UPDATE log_records SET idx = idx - 1000001 WHERE idx >= 1000000")
		rehash(t, db)
	})
	r.yankFirst() // the rewritten log grows on: the state's checkpoint must be its prefix
	code, stderr := r.verify(r.url, state)
	assertCaught(t, code, stderr, "log.fork", "does not extend the checkpoint seen before at size 5")
}

// TestForkSameSize: the registry signs a second log of the same size (two records
// swapped, rehashed): the checkpoint seen before and the one served now disagree.
func TestForkSameSize(t *testing.T) {
	r := startRegistry(t)
	state := filepath.Join(t.TempDir(), "audit.json")
	r.mustVerify(r.url, state)
	r.restart(func(db *sql.DB) {
		unlockLog(t, db)
		swapRecords(t, db, 0, 1)
		rehash(t, db)
	})
	code, stderr := r.verify(r.url, state)
	assertCaught(t, code, stderr, "log.fork", "the registry signed two different logs")
}

// TestReplayOldIndex: after a yank raised the serial, the old index.json with its old
// (still valid) signature is served again.
func TestReplayOldIndex(t *testing.T) {
	r := startRegistry(t)
	state := filepath.Join(t.TempDir(), "audit.json")
	r.mustVerify(r.url, state)
	old := map[string][]byte{"/index.json": r.get("/index.json"), "/index.json.sig": r.get("/index.json.sig")}
	r.yankFirst()
	r.mustVerify(r.url, state)
	code, stderr := r.verify(r.proxy(old), state)
	assertCaught(t, code, stderr, "log.index.rollback", "older than serial")
}

// TestExpiredSignature: a mirror frozen on a document whose signature has expired (here
// signed with the registry's key to have expired a day ago).
func TestExpiredSignature(t *testing.T) {
	r := startRegistry(t)
	key, err := translog.LoadKey(r.data, "", "")
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open(r.get("/curupira/index.json.sig"), note.VerifierList(key.Verifier))
	if err != nil {
		t.Fatal(err)
	}
	st, err := ingest.ParseIndexStatement([]byte(n.Text))
	if err != nil {
		t.Fatal(err)
	}
	st.SignedAt, st.Expires = time.Now().Add(-8*24*time.Hour).Truncate(time.Second), time.Now().Add(-24*time.Hour).Truncate(time.Second)
	expired, err := ingest.SignIndexStatement(st, key.Signer)
	if err != nil {
		t.Fatal(err)
	}
	code, stderr := r.verify(r.proxy(map[string][]byte{"/curupira/index.json.sig": expired}), filepath.Join(t.TempDir(), "fresh.json"))
	assertCaught(t, code, stderr, "log.index.expired", "the registry or mirror stopped re-signing (frozen)")
}

func swapRecords(t *testing.T, db *sql.DB, a, b int) {
	t.Helper()
	mustExec(t, db, "UPDATE log_records SET idx = 1000000 WHERE idx = ?", a)
	mustExec(t, db, "UPDATE log_records SET idx = ? WHERE idx = ?", a, b)
	mustExec(t, db, "UPDATE log_records SET idx = ? WHERE idx = 1000000", b)
}

package crash

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/translog"
)

// memHashes is a tree rebuilt from the leaves alone.
type memHashes []tlog.Hash

func (m *memHashes) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		if x < 0 || x >= int64(len(*m)) {
			return nil, fmt.Errorf("no hash %d", x)
		}
		out[i] = (*m)[x]
	}
	return out, nil
}

// checkLog reads the killed registry's database directly: every stored release has exactly
// one publish record with its sha256 and no publish record lacks its release; records are
// numbered without gaps; the stored tree hashes are exactly those the leaves recompute; and
// the latest saved checkpoint verifies with the data directory's key and is a tree of those
// leaves.
func checkLog(t *testing.T, data string, seed uint64) {
	t.Helper()
	db, err := sql.Open("sqlite", store.SQLiteURI(filepath.Join(data, store.DBFile))+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rels := queryPairs(t, db, "SELECT package_id || '@' || version, sha256 FROM releases")
	texts := queryLeaves(t, db, seed)
	published := map[string]string{}
	for i, text := range texts {
		r, err := translog.ParseRecord(text)
		if err != nil {
			t.Fatalf("seed %d: log record %d: %v", seed, i, err)
		}
		if r.Kind != translog.KindPublish {
			continue
		}
		k := r.ID + "@" + r.Version
		if _, dup := published[k]; dup {
			t.Fatalf("seed %d: %s has two publish records (the second at %d)", seed, k, i)
		}
		published[k] = r.SHA256
	}
	for k, sha := range rels {
		if published[k] != sha {
			t.Fatalf("seed %d: release %s (sha256 %s) has publish record sha256 %q after a kill", seed, k, sha, published[k])
		}
	}
	for k := range published {
		if _, ok := rels[k]; !ok {
			t.Fatalf("seed %d: publish record for %s, which has no release row, after a kill", seed, k)
		}
	}
	tree := recompute(t, texts)
	checkStoredHashes(t, db, tree, seed)
	checkSavedCheckpoint(t, db, data, tree, int64(len(texts)), seed)
}

func queryPairs(t *testing.T, db *sql.DB, q string) map[string]string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func queryLeaves(t *testing.T, db *sql.DB, seed uint64) [][]byte {
	t.Helper()
	rows, err := db.Query("SELECT idx, body FROM log_records ORDER BY idx")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var (
			idx  int64
			body []byte
		)
		if err := rows.Scan(&idx, &body); err != nil {
			t.Fatal(err)
		}
		if idx != int64(len(out)) {
			t.Fatalf("seed %d: log record %d follows %d records: a gap", seed, idx, len(out))
		}
		out = append(out, body)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func recompute(t *testing.T, texts [][]byte) *memHashes {
	t.Helper()
	m := &memHashes{}
	for i, text := range texts {
		hs, err := tlog.StoredHashes(int64(i), text, m)
		if err != nil {
			t.Fatal(err)
		}
		*m = append(*m, hs...)
	}
	return m
}

func checkStoredHashes(t *testing.T, db *sql.DB, tree *memHashes, seed uint64) {
	t.Helper()
	rows, err := db.Query("SELECT idx, hash FROM log_hashes ORDER BY idx")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var (
			idx int64
			h   []byte
		)
		if err := rows.Scan(&idx, &h); err != nil {
			t.Fatal(err)
		}
		if idx != int64(n) || idx >= int64(len(*tree)) || tlog.Hash(h) != (*tree)[idx] {
			t.Fatalf("seed %d: stored tree hash %d is not the one the leaves recompute", seed, idx)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(*tree) {
		t.Fatalf("seed %d: %d stored tree hashes, the leaves make %d", seed, n, len(*tree))
	}
}

func checkSavedCheckpoint(t *testing.T, db *sql.DB, data string, tree *memHashes, size int64, seed uint64) {
	t.Helper()
	var note []byte
	if err := db.QueryRow("SELECT note FROM log_checkpoints ORDER BY size DESC LIMIT 1").Scan(&note); errors.Is(err, sql.ErrNoRows) {
		return
	} else if err != nil {
		t.Fatal(err)
	}
	key, err := translog.LoadKey(data, "", "unused/log")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := translog.OpenCheckpoint(note, key.Verifier)
	if err != nil {
		t.Fatalf("seed %d: saved checkpoint: %v", seed, err)
	}
	root, err := tlog.TreeHash(cp.Size, tree)
	if cp.Size > size || err != nil || root != cp.Hash {
		t.Fatalf("seed %d: saved checkpoint of %d records (of %d) does not match the leaves: %v", seed, cp.Size, size, err)
	}
}

// checkLookups asks the restarted registry for its checkpoint and, for every acknowledged
// release, its lookup: each proof verifies against the checkpoint, under the key of the
// data directory, and names the acknowledged sha256.
func checkLookups(t *testing.T, base, dir string, acked map[string]ack, seed uint64) {
	t.Helper()
	key, err := translog.LoadKey(filepath.Join(dir, "data"), "", "unused/log")
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Get(base + "/log/checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	note, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	cp, err := translog.OpenCheckpoint(note, key.Verifier)
	if err != nil {
		t.Fatalf("seed %d: /log/checkpoint after a restart: %v\n%s", seed, err, note)
	}
	for k, a := range acked {
		var l struct {
			Index    int64            `json:"index"`
			Leaf     string           `json:"leaf"`
			TreeSize int64            `json:"tree_size"`
			Proof    tlog.RecordProof `json:"proof"`
		}
		if status := getJSON(t, base+"/log/lookup/"+k, &l); status != http.StatusOK {
			t.Fatalf("seed %d: lookup %s: %d", seed, k, status)
		}
		rec, err := translog.ParseRecord([]byte(l.Leaf))
		if err != nil || rec.SHA256 != a.sha || l.TreeSize != cp.Size {
			t.Fatalf("seed %d: lookup %s: record %+v in a tree of %d (checkpoint %d): %v", seed, k, rec, l.TreeSize, cp.Size, err)
		}
		if err := tlog.CheckRecord(l.Proof, cp.Size, cp.Hash, l.Index, tlog.RecordHash([]byte(l.Leaf))); err != nil {
			t.Fatalf("seed %d: lookup %s: proof: %v", seed, k, err)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/translog"
)

// lyingLog serves a log, its tiles, index documents and their signatures, and
// packages, built from its fields on every request so that a test can make it lie.
type lyingLog struct {
	t           testing.TB
	signer      note.Signer
	verifier    note.Verifier
	verifierKey string
	records     [][]byte // leaf texts
	hashes      []tlog.Hash
	packages    map[string][]byte // "id@version" → bytes
	listed      []string          // "id@version" in index.json
	serial      int64
	now         time.Time
	srv         *httptest.Server

	// lies
	dataTile    func([]byte) []byte // rewrites data tiles
	signWith    note.Signer         // signs the checkpoint with another key
	entrySHA    map[string]string   // index.json says this sha256 for id@version
	served      map[string][]byte   // package bytes served instead
	noSig       bool
	noLog       bool // a static host without log/
	staleSigs   int  // this many signature requests get a signature over other bytes (a rebuild in between)
	statement   func(*ingest.IndexStatement)
	checkpointN int64         // serve a checkpoint of this size (0: all records)
	ahead       time.Duration // the auditor's clock is this far ahead of the registry's
}

func newLyingLog(t testing.TB) *lyingLog {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, "fake.test/log")
	if err != nil {
		t.Fatal(err)
	}
	f := &lyingLog{t: t, packages: map[string][]byte{}, serial: 3, now: time.Now().UTC().Truncate(time.Second),
		entrySHA: map[string]string{}, served: map[string][]byte{}}
	f.signer, _ = note.NewSigner(skey)
	f.verifier, _ = note.NewVerifier(vkey)
	f.verifierKey = vkey
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// publish appends a publish record of id@version with data and lists it.
func (f *lyingLog) publish(id, version string, data []byte) {
	sum := sha256.Sum256(data)
	f.appendRecord(translog.RecordText(translog.Record{Kind: translog.KindPublish, ID: id, Version: version,
		SHA256: hex.EncodeToString(sum[:]), Signer: translog.Unsigned, Time: f.now}))
	f.packages[id+"@"+version] = data
	f.listed = append(f.listed, id+"@"+version)
}

func (f *lyingLog) appendRecord(text []byte) {
	hs, err := tlog.StoredHashes(int64(len(f.records)), text, f.reader())
	if err != nil {
		f.t.Fatal(err)
	}
	f.records, f.hashes = append(f.records, text), append(f.hashes, hs...)
}

func (f *lyingLog) reader() tlog.HashReader {
	return tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			if x >= int64(len(f.hashes)) {
				return nil, fmt.Errorf("no hash %d", x)
			}
			out[i] = f.hashes[x]
		}
		return out, nil
	})
}

func (f *lyingLog) size() int64 {
	if f.checkpointN > 0 {
		return f.checkpointN
	}
	return int64(len(f.records))
}

func (f *lyingLog) checkpoint() []byte {
	root, err := tlog.TreeHash(f.size(), f.reader())
	if err != nil {
		f.t.Fatal(err)
	}
	s := f.signer
	if f.signWith != nil {
		s = f.signWith
	}
	cp, err := translog.SignCheckpoint(s, f.size(), root)
	if err != nil {
		f.t.Fatal(err)
	}
	return cp.Note
}

func (f *lyingLog) indexJSON() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"schema_version":1,"generated_at":"%s","serial":%d,"plugins":[`, f.now.Format(time.RFC3339), f.serial)
	for i, key := range f.listed {
		id, version, _ := strings.Cut(key, "@")
		sum := sha256.Sum256(f.packages[key])
		sha := hex.EncodeToString(sum[:])
		if s, ok := f.entrySHA[key]; ok {
			sha = s
		}
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%q,"version":%q,"package_url":"%s/packages/%s","package_sha256":%q}`, id, version, f.srv.URL, key, sha)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

func (f *lyingLog) curupiraJSON() []byte {
	return fmt.Appendf(nil, `{"schema_version":1,"generated_at":"%s","serial":%d,"extensions":[]}`, f.now.Format(time.RFC3339), f.serial)
}

func (f *lyingLog) signature(doc string, body []byte) []byte {
	root, _ := tlog.TreeHash(f.size(), f.reader())
	sum := sha256.Sum256(body)
	st := ingest.IndexStatement{Document: doc, SHA256: hex.EncodeToString(sum[:]), Serial: f.serial, GeneratedAt: f.now,
		SignedAt: f.now, Expires: f.now.Add(7 * 24 * time.Hour), LogOrigin: f.signer.Name(), LogSize: f.size(), LogRoot: root}
	if f.statement != nil {
		f.statement(&st)
	}
	msg, err := ingest.SignIndexStatement(st, f.signer)
	if err != nil {
		f.t.Fatal(err)
	}
	return msg
}

func (f *lyingLog) serve(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimPrefix(r.URL.Path, "/")
	docs := map[string][]byte{ingest.KandevDocument: f.indexJSON(), ingest.CurupiraDocument: f.curupiraJSON()}
	switch {
	case f.noLog && strings.HasPrefix(p, "log/"):
		http.NotFound(w, r)
	case p == "log/checkpoint":
		_, _ = w.Write(f.checkpoint())
	case strings.HasPrefix(p, "log/tile/"):
		f.serveTile(w, strings.TrimPrefix(p, "log/"))
	case docs[p] != nil:
		_, _ = w.Write(docs[p])
	case strings.HasSuffix(p, ".sig") && docs[strings.TrimSuffix(p, ".sig")] != nil && !f.noSig:
		body := docs[strings.TrimSuffix(p, ".sig")]
		if f.staleSigs > 0 {
			f.staleSigs--
			body = append(bytes.Clone(body), ' ')
		}
		_, _ = w.Write(f.signature(strings.TrimSuffix(p, ".sig"), body))
	case strings.HasPrefix(p, "packages/"):
		key := strings.TrimPrefix(p, "packages/")
		if b, ok := f.served[key]; ok {
			_, _ = w.Write(b)
			return
		}
		_, _ = w.Write(f.packages[key])
	default:
		http.NotFound(w, r)
	}
}

func (f *lyingLog) serveTile(w http.ResponseWriter, path string) {
	t, err := tlog.ParseTilePath(path)
	if err != nil || !translog.TileInTree(t, f.size()) {
		http.NotFound(w, nil)
		return
	}
	if t.L >= 0 {
		data, err := tlog.ReadTileData(t, f.reader())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(data)
		return
	}
	var data []byte
	start := t.N << t.H
	for _, text := range f.records[start : start+int64(t.W)] {
		data = append(append(data, text...), '\n')
	}
	if f.dataTile != nil {
		data = f.dataTile(data)
	}
	_, _ = w.Write(data)
}

// audit runs one audit of f with state (nil: a first run) and returns the problems' rules.
func (f *lyingLog) audit(state *auditor, packages bool) (*auditor, []string, problem.List) {
	a := &auditor{base: f.srv.URL, verifier: f.verifier, client: http.DefaultClient, progress: io.Discard,
		now: func() time.Time { return f.now.Add(f.ahead) }, packages: packages}
	if state != nil {
		a.prev, a.state = state.cp, state.state
	} else if err := a.loadState(""); err != nil {
		f.t.Fatal(err)
	}
	_, probs := a.run(context.Background())
	var rules []string
	for _, p := range probs {
		rules = append(rules, p.Rule)
	}
	slices.Sort(rules)
	return a, slices.Compact(rules), probs
}

func seededLyingLog(t testing.TB) *lyingLog {
	f := newLyingLog(t)
	f.publish("acme-hello", "1.0.0", []byte("hello one"))
	f.publish("acme-other", "2.0.0", []byte("other two"))
	f.appendRecord(translog.RecordText(translog.Record{Kind: translog.KindYank, ID: "acme-other", Version: "2.0.0", Time: f.now}))
	return f
}

// TestAuditRules: each lie is caught by its rule, and only by it.
func TestAuditRules(t *testing.T) {
	otherSigner, _ := mustNoteKeys(t)
	tests := []struct {
		name    string
		lie     func(f *lyingLog)
		fresh   bool // audit without the state of a first, honest run
		pkgs    bool
		want    string
		message string
	}{
		{"honest", func(*lyingLog) {}, false, true, "", ""},
		{"checkpoint of another key", func(f *lyingLog) { f.signWith = otherSigner }, false, false, ruleCheckpoint, "does not verify against key"},
		{"no log", func(f *lyingLog) { f.noLog = true }, false, false, ruleFetch, "log/checkpoint: 404 Not Found"},
		{"log shrank", func(f *lyingLog) { f.checkpointN = 2 }, false, false, ruleFork, "fewer than the 3"},
		{"record changed", func(f *lyingLog) {
			f.dataTile = func(b []byte) []byte { return bytes.Replace(b, []byte("acme-hello"), []byte("acme-hellO"), 1) }
		}, true, false, ruleRecord, "does not hash to leaf #0"},
		{"data tile short", func(f *lyingLog) {
			f.dataTile = func(b []byte) []byte { return b[:bytes.Index(b, []byte("\n\n"))+2] }
		}, true, false, ruleRecord, "want exactly 3 records, found 1"},
		{"malformed record in the tree", func(f *lyingLog) { f.appendRecord([]byte("{\"kind\":\"publish\"}\n")) }, false, false, ruleRecord, "malformed record"},
		{"a version recorded twice", func(f *lyingLog) {
			f.appendRecord(translog.RecordText(translog.Record{Kind: translog.KindPublish, ID: "acme-hello", Version: "1.0.0",
				SHA256: strings.Repeat("ab", 32), Signer: translog.Unsigned, Time: f.now}))
		}, false, false, ruleImmutable, "acme-hello@1.0.0 is recorded twice"},
		{"listed but never logged", func(f *lyingLog) {
			f.packages["acme-ghost@1.0.0"] = []byte("ghost")
			f.listed = append(f.listed, "acme-ghost@1.0.0")
		}, false, false, ruleInclusion, "acme-ghost@1.0.0 is listed, but the log has no publish record"},
		{"listed before its checkpoint", func(f *lyingLog) {
			f.publish("acme-late", "1.0.0", []byte("late"))
			f.statement = func(st *ingest.IndexStatement) {
				st.LogSize = 3
				st.LogRoot, _ = tlog.TreeHash(3, f.reader())
			}
		}, false, false, ruleInclusion, "after the checkpoint of size 3"},
		{"sha256 not the log's", func(f *lyingLog) { f.entrySHA["acme-hello@1.0.0"] = strings.Repeat("cd", 32) }, false, false, ruleSHA256, "the package was swapped"},
		{"rebuilt between the document and its signature", func(f *lyingLog) { f.staleSigs = 1 }, false, false, "", ""},
		{"signature over other bytes", func(f *lyingLog) { f.staleSigs = 2 }, false, false, ruleIndexSignature, "the document was changed after it was signed"},
		{"no signature", func(f *lyingLog) { f.noSig = true }, false, false, ruleIndexSignature, "an unsigned index cannot be checked"},
		{"signature of another log", func(f *lyingLog) { f.statement = func(st *ingest.IndexStatement) { st.LogRoot = tlog.Hash{1} } }, false, false, ruleIndexLog, "built from another log"},
		{"signature beyond the checkpoint", func(f *lyingLog) { f.statement = func(st *ingest.IndexStatement) { st.LogSize = 99 } }, false, false, ruleIndexLog, "at size 99, but the verified checkpoint is fake.test/log at size 3"},
		{"rollback", func(f *lyingLog) { f.serial = 2 }, false, false, ruleRollback, "older than serial 3"},
		{"expired", func(f *lyingLog) { f.ahead = 7 * 24 * time.Hour }, false, false, ruleExpired, "stopped re-signing"},
		{"package bytes differ", func(f *lyingLog) { f.served["acme-hello@1.0.0"] = []byte("evil") }, false, true, rulePackage, "not the one published"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := seededLyingLog(t)
			first, rules, probs := f.audit(nil, false)
			if len(rules) > 0 {
				t.Fatalf("honest first run: %v", probs)
			}
			tt.lie(f)
			state := first
			if tt.fresh {
				state = nil
			}
			_, rules, probs = f.audit(state, tt.pkgs)
			if tt.want == "" {
				if len(rules) > 0 {
					t.Fatalf("honest second run: %v", probs)
				}
				return
			}
			if !slices.Equal(rules, []string{tt.want}) || !strings.Contains(fmt.Sprint(probs), tt.message) {
				t.Errorf("rules %v, problems:\n%v\nwant only [%s] mentioning %q", rules, probs, tt.want, tt.message)
			}
		})
	}
}

// TestAuditStateFile: --state is written only after a clean run, carries the next run,
// and a state that does not decode or is not the key's is refused with what to do.
func TestAuditStateFile(t *testing.T) {
	f := seededLyingLog(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "audit.json")
	run := func() (int, string) {
		c, _, errOut := testCLI(nil)
		code := cmdLogVerify(context.Background(), c, []string{"--registry", f.srv.URL, "--key", f.verifierKey, "--state", state})
		return code, errOut.String()
	}
	if code, errOut := run(); code != exitOK {
		t.Fatalf("first run: %d %s", code, errOut)
	}
	f.serial = 2
	if code, errOut := run(); code != exitInvalid || !strings.Contains(errOut, "[log.index.rollback]") {
		t.Fatalf("rollback run: %d %s", code, errOut)
	}
	f.serial = 3
	if code, errOut := run(); code != exitOK {
		t.Errorf("after a refused run the state still holds serial 3: %d %s", code, errOut)
	}
	for name, content := range map[string]string{"garbage": "{", "another key": `{"checkpoint":"x\n"}`} {
		if err := os.WriteFile(state, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"garbage": "does not decode", "another key": "its checkpoint is not one of key"}[name]
		if code, errOut := run(); code != exitInvalid || !strings.Contains(errOut, want) {
			t.Errorf("%s state: exit %d %s, want 1 and %q", name, code, errOut, want)
		}
	}
}

func mustNoteKeys(t testing.TB) (note.Signer, note.Verifier) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, "fake.test/log")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := note.NewSigner(skey)
	v, _ := note.NewVerifier(vkey)
	return s, v
}

// FuzzSplitDataTile: any bytes either split into exactly w records, each ending in a
// newline and joining back to the input, or are refused; never a panic.
func FuzzSplitDataTile(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n\n{\"b\":2}\n\n"), 2)
	f.Add([]byte("\n\n\n\n"), 2)
	f.Add([]byte("x\n"), 1)
	f.Fuzz(func(t *testing.T, data []byte, w int) {
		if w < 0 || w > 1<<translog.TileHeight {
			return
		}
		texts, err := splitDataTile(data, w)
		if err != nil {
			return
		}
		var joined []byte
		for _, text := range texts {
			if len(text) == 0 || text[len(text)-1] != '\n' {
				t.Fatalf("record %q does not end in a newline", text)
			}
			joined = append(append(joined, text...), '\n')
		}
		if len(texts) != w || !bytes.Equal(joined, data) {
			t.Fatalf("split %q into %d records %q", data, len(texts), texts)
		}
	})
}

// FuzzAuditTiles: whatever bytes a registry serves as the first hash tile, the audit
// never panics and never accepts a tile other than the true one.
func FuzzAuditTiles(f *testing.F) {
	reg := seededLyingLog(f)
	good, err := tlog.ReadTileData(tlog.Tile{H: translog.TileHeight, L: 0, N: 0, W: 3}, reg.reader())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:64])
	f.Add(append(bytes.Clone(good), 0))
	f.Fuzz(func(t *testing.T, tile []byte) {
		a := &auditor{base: "http://unused", verifier: reg.verifier, progress: io.Discard, now: time.Now}
		if err := a.loadState(""); err != nil {
			t.Fatal(err)
		}
		root, _ := tlog.TreeHash(3, reg.reader())
		a.cp = translog.Checkpoint{Origin: reg.signer.Name(), Size: 3, Hash: root}
		a.tiles = &httpTiles{a: a, ctx: context.Background(), cache: map[tlog.Tile][]byte{{H: translog.TileHeight, L: 0, N: 0, W: 3}: tile}}
		_, err := tlog.TreeHash(3, tlog.TileHashReader(tlog.Tree{N: 3, Hash: root}, a.tiles))
		if err == nil && !bytes.Equal(tile, good) {
			t.Fatalf("a forged tile %x was accepted", tile)
		}
	})
}

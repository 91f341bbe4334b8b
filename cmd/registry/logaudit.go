package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/translog"
)

// Rule ids of `registry log verify`'s findings.
const (
	ruleFetch          = "log.fetch"           // a file the audit needs could not be read
	ruleCheckpoint     = "log.checkpoint"      // the checkpoint is not signed by the key, or does not parse
	ruleFork           = "log.fork"            // the log is not an extension of the checkpoint seen before
	ruleRecord         = "log.record"          // a record does not hash to its leaf, or is malformed
	ruleImmutable      = "log.immutable"       // the log records one id@version with two sha256
	ruleInclusion      = "log.inclusion"       // an index entry the log never recorded
	ruleSHA256         = "log.sha256"          // an index entry whose sha256 is not the log's
	ruleIndexSignature = "log.index.signature" // the index signature is missing, invalid or not the document's
	ruleRollback       = "log.index.rollback"  // an index older than one seen before
	ruleExpired        = "log.index.expired"   // an expired index signature (frozen)
	ruleIndexLog       = "log.index.log"       // the signature names a checkpoint this log does not have
	rulePackage        = "log.package"         // a downloaded package whose sha256 is not the index's
)

// maxAuditFile bounds any one file the audit reads (index documents are at most 5 MiB;
// tiles at most 1 MiB).
const maxAuditFile = 16 << 20

// auditState is what --state keeps between runs: the last verified checkpoint, the newest
// serial seen of each document, and every published release the log recorded, so that a
// run reads only the records added since.
type auditState struct {
	Checkpoint string                   `json:"checkpoint"` // the signed note
	Documents  map[string]seenDocument  `json:"documents"`
	Releases   map[string]loggedRelease `json:"releases"` // "id@version" →
}

type seenDocument struct {
	Serial      int64     `json:"serial"`
	GeneratedAt time.Time `json:"generated_at"`
}

type loggedRelease struct {
	Index  int64  `json:"index"`
	SHA256 string `json:"sha256"`
}

// auditor runs one audit of the registry at base.
type auditor struct {
	base     string
	verifier note.Verifier
	client   *http.Client
	progress io.Writer
	now      func() time.Time
	packages bool

	prev  translog.Checkpoint // from the state; Size 0 when none
	state auditState
	cp    translog.Checkpoint
	tiles *httpTiles
}

func (a *auditor) loadState(path string) error {
	a.state = auditState{Documents: map[string]seenDocument{}, Releases: map[string]loggedRelease{}}
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // the first run: trust on first use
	}
	if err != nil {
		return fmt.Errorf("--state %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &a.state); err != nil {
		return fmt.Errorf("--state %s does not decode (%v); delete it to start over, trusting the registry's log as it is now", path, err)
	}
	if a.prev, err = translog.OpenCheckpoint([]byte(a.state.Checkpoint), a.verifier); err != nil {
		return fmt.Errorf("--state %s: its checkpoint is not one of key %s: %v", path, a.verifier.Name(), err)
	}
	if a.state.Documents == nil {
		a.state.Documents = map[string]seenDocument{}
	}
	if a.state.Releases == nil {
		a.state.Releases = map[string]loggedRelease{}
	}
	return nil
}

// saveState writes the state next to path and renames it into place.
func (a *auditor) saveState(path string) error {
	a.state.Checkpoint = string(a.cp.Note)
	b, err := json.Marshal(a.state)
	if err != nil {
		return fmt.Errorf("--state: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("--state: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(b)
	if err := errors.Join(werr, tmp.Sync(), tmp.Close()); err != nil {
		return fmt.Errorf("--state %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("--state %s: %w", path, err)
	}
	return nil
}

// run audits and returns a one-line summary, or every problem found.
func (a *auditor) run(ctx context.Context) (string, problem.List) {
	var probs problem.List
	if !a.checkLog(ctx, &probs) {
		return "", probs
	}
	entries := 0
	var serials []string
	for _, doc := range []string{ingest.KandevDocument, ingest.CurupiraDocument} {
		n, st := a.checkDocument(ctx, doc, &probs)
		entries += n
		if st != nil {
			serials = append(serials, fmt.Sprintf("%s serial %d (signature valid until %s)", doc, st.Serial, st.Expires.Format(time.RFC3339)))
		}
	}
	if len(probs) > 0 {
		return "", probs
	}
	return fmt.Sprintf("verified: log %s at size %d (root %s), consistent with size %d seen before; %d index entries recorded in the log; %s",
		a.cp.Origin, a.cp.Size, a.cp.Hash, a.prev.Size, entries, strings.Join(serials, "; ")), nil
}

// checkLog reads the checkpoint, proves it extends the state's and reads the new records;
// false when the rest of the audit cannot rely on the log.
func (a *auditor) checkLog(ctx context.Context, probs *problem.List) bool {
	msg, err := a.fetch(ctx, "log/checkpoint")
	if err != nil {
		probs.Errorf(ruleFetch, "log/checkpoint", "%v", err)
		return false
	}
	if a.cp, err = translog.OpenCheckpoint(msg, a.verifier); err != nil {
		probs.Errorf(ruleCheckpoint, "log/checkpoint", "the checkpoint does not verify against key %s: %v; the registry signs with another key, or the checkpoint was forged", a.verifier.Name(), err)
		return false
	}
	a.tiles = &httpTiles{a: a, ctx: ctx, cache: map[tlog.Tile][]byte{}}
	if !a.checkConsistency(probs) {
		return false
	}
	return a.readRecords(probs)
}

// checkConsistency proves that the checkpoint's tree extends the state's (a fork, or a
// rewritten or shortened history, fails).
func (a *auditor) checkConsistency(probs *problem.List) bool {
	old, cur := a.prev, a.cp
	switch {
	case old.Size == 0:
		return true
	case cur.Size < old.Size:
		probs.Errorf(ruleFork, "log/checkpoint", "the log has %d records, fewer than the %d of the checkpoint seen before: records were removed (history rewritten) or an old checkpoint is replayed", cur.Size, old.Size)
		return false
	case cur.Size == old.Size && cur.Hash != old.Hash:
		probs.Errorf(ruleFork, "log/checkpoint", "fork: the checkpoint of size %d has root %s, but the one seen before at the same size had root %s; the registry signed two different logs", cur.Size, cur.Hash, old.Hash)
		return false
	case cur.Size == old.Size:
		return true
	}
	hr := tlog.TileHashReader(tlog.Tree{N: cur.Size, Hash: cur.Hash}, a.tiles)
	p, err := tlog.ProveTree(cur.Size, old.Size, hr)
	if err == nil {
		err = tlog.CheckTree(p, cur.Size, cur.Hash, old.Size, old.Hash)
	}
	if err != nil {
		probs.Errorf(ruleFork, "log/checkpoint", "fork: the log at size %d (root %s) does not extend the checkpoint seen before at size %d (root %s): %v; its history was rewritten", cur.Size, cur.Hash, old.Size, old.Hash, err)
		return false
	}
	return true
}

// readRecords reads the records added since the state's checkpoint from the data tiles,
// checks each against its leaf hash (proven in the checkpoint's tree by the hash tiles),
// and remembers every publish record.
func (a *auditor) readRecords(probs *problem.List) bool {
	start, end := a.prev.Size, a.cp.Size
	if end > start {
		fmt.Fprintf(a.progress, "log: reading records %d to %d\n", start, end-1)
	}
	hr := tlog.TileHashReader(tlog.Tree{N: a.cp.Size, Hash: a.cp.Hash}, a.tiles)
	for lo := start; lo < end; lo = (lo>>translog.TileHeight + 1) << translog.TileHeight {
		hi := min((lo>>translog.TileHeight+1)<<translog.TileHeight, end)
		if !a.readTileRecords(hr, lo, hi, probs) {
			return false
		}
	}
	return len(*probs) == 0
}

func (a *auditor) readTileRecords(hr tlog.HashReader, lo, hi int64, probs *problem.List) bool {
	n := lo >> translog.TileHeight
	t := tlog.Tile{H: translog.TileHeight, L: -1, N: n, W: int(hi - n<<translog.TileHeight)}
	data, err := a.fetch(a.tiles.ctx, "log/"+t.Path())
	if err != nil {
		probs.Errorf(ruleFetch, "log/"+t.Path(), "%v", err)
		return false
	}
	texts, err := splitDataTile(data, t.W)
	if err != nil {
		probs.Errorf(ruleRecord, "log/"+t.Path(), "%v", err)
		return false
	}
	idx := make([]int64, 0, hi-lo)
	for i := lo; i < hi; i++ {
		idx = append(idx, tlog.StoredHashIndex(0, i))
	}
	leaves, err := hr.ReadHashes(idx)
	if err != nil {
		probs.Errorf(ruleRecord, "log/"+t.Path(), "the hash tiles do not prove records %d to %d in the checkpoint's tree: %v", lo, hi-1, err)
		return false
	}
	for i := lo; i < hi; i++ {
		a.checkRecord(i, texts[i-n<<translog.TileHeight], leaves[i-lo], probs)
	}
	return true
}

func (a *auditor) checkRecord(i int64, text []byte, leaf tlog.Hash, probs *problem.List) {
	path := fmt.Sprintf("log record #%d", i)
	if tlog.RecordHash(text) != leaf {
		probs.Errorf(ruleRecord, path, "the record %.120q does not hash to leaf #%d of the signed tree: the log's records were changed, dropped or reordered after they were signed", text, i)
		return
	}
	rec, err := translog.ParseRecord(text)
	if err != nil {
		probs.Errorf(ruleRecord, path, "%v", err)
		return
	}
	if rec.Kind != translog.KindPublish {
		return // yanks and other events do not change what a version's bytes are
	}
	key := rec.ID + "@" + rec.Version
	if prev, ok := a.state.Releases[key]; ok && prev.SHA256 != rec.SHA256 {
		probs.Errorf(ruleImmutable, path, "%s is recorded twice: at #%d with sha256 %s and at #%d with %s; a published version never changes bytes", key, prev.Index, prev.SHA256, i, rec.SHA256)
		return
	}
	a.state.Releases[key] = loggedRelease{Index: i, SHA256: rec.SHA256}
}

// splitDataTile splits a data tile into its w records: each record's text ends in a
// newline and is followed by a blank line.
func splitDataTile(data []byte, w int) ([][]byte, error) {
	texts := make([][]byte, 0, w)
	for len(data) > 0 && len(texts) < w {
		i := bytes.Index(data, []byte("\n\n"))
		if i < 0 {
			return nil, fmt.Errorf("data tile: record %d does not end in a blank line", len(texts))
		}
		texts = append(texts, data[:i+1])
		data = data[i+2:]
	}
	if len(texts) != w || len(data) != 0 {
		return nil, fmt.Errorf("data tile: want exactly %d records, found %d and %d more bytes", w, len(texts), len(data))
	}
	return texts, nil
}

// fetch reads base/path, up to maxAuditFile bytes.
func (a *auditor) fetch(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/"+path, nil)
	if err != nil {
		return nil, err
	}
	res, err := a.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", req.URL, res.Status)
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, maxAuditFile+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", req.URL, err)
	}
	if len(b) > maxAuditFile {
		return nil, fmt.Errorf("GET %s: more than %d bytes", req.URL, maxAuditFile)
	}
	return b, nil
}

// httpTiles reads hash tiles from base/log/tile/…, once each per run.
type httpTiles struct {
	a     *auditor
	ctx   context.Context
	cache map[tlog.Tile][]byte
}

func (t *httpTiles) Height() int { return translog.TileHeight }

func (t *httpTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, tile := range tiles {
		if b, ok := t.cache[tile]; ok {
			out[i] = b
			continue
		}
		b, err := t.a.fetch(t.ctx, "log/"+tile.Path())
		if err != nil {
			return nil, err
		}
		if len(b) != tile.W*tlog.HashSize {
			return nil, fmt.Errorf("tile %s: %d bytes, want %d", tile.Path(), len(b), tile.W*tlog.HashSize)
		}
		t.cache[tile], out[i] = b, b
	}
	return out, nil
}

func (t *httpTiles) SaveTiles([]tlog.Tile, [][]byte) {}

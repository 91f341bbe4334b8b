package translog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/pluginyard/registry/translog"
)

// memStorage is translog.Storage in memory, appending as the store does.
type memStorage struct {
	mu      sync.Mutex
	texts   [][]byte
	hashes  []tlog.Hash
	publish map[string]int64
	saved   map[int64][]byte
}

func newMem() *memStorage {
	return &memStorage{publish: map[string]int64{}, saved: map[int64][]byte{}}
}

func (m *memStorage) append(tb testing.TB, r translog.Record) {
	tb.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	n := int64(len(m.texts))
	text := translog.RecordText(r)
	hs, err := tlog.StoredHashes(n, text, tlog.HashReaderFunc(m.read))
	if err != nil {
		tb.Fatal(err)
	}
	m.hashes = append(m.hashes, hs...)
	m.texts = append(m.texts, text)
	if r.Kind == translog.KindPublish {
		m.publish[r.ID+"@"+r.Version] = n
	}
}

func (m *memStorage) read(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		if x < 0 || x >= int64(len(m.hashes)) {
			return nil, fmt.Errorf("no hash %d", x)
		}
		out[i] = m.hashes[x]
	}
	return out, nil
}

func (m *memStorage) LogSize(context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return int64(len(m.texts)), nil
}

func (m *memStorage) ReadHashes(_ context.Context, idx []int64) ([]tlog.Hash, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.read(idx)
}

func (m *memStorage) RecordTexts(_ context.Context, start, end int64) ([][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.texts[start:end], nil
}

func (m *memStorage) LookupRelease(_ context.Context, id, version string) (int64, []byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.publish[id+"@"+version]
	if !ok {
		return 0, nil, errors.New("not found")
	}
	return n, m.texts[n], nil
}

func (m *memStorage) LatestCheckpoint(context.Context) ([]byte, error) {
	var best int64 = -1
	for s := range m.saved {
		best = max(best, s)
	}
	return m.saved[best], nil
}

func (m *memStorage) SaveCheckpoint(_ context.Context, size int64, note []byte) error {
	if _, ok := m.saved[size]; !ok {
		m.saved[size] = note
	}
	return nil
}

func publishRecord(i int) translog.Record {
	return translog.Record{Kind: translog.KindPublish, ID: fmt.Sprintf("p%d", i%7), Version: fmt.Sprintf("1.0.%d", i),
		SHA256: sha, Signer: translog.Unsigned, Time: at}
}

// tileReader fetches tiles through Log.Tile, as a client fetches /log/tile/…
type tileReader struct {
	ctx context.Context
	lg  *translog.Log
}

func (r tileReader) Height() int { return translog.TileHeight }

func (r tileReader) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		b, err := r.lg.Tile(r.ctx, t)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

func (r tileReader) SaveTiles([]tlog.Tile, [][]byte) {}

func TestLogProofsAndTilesVerify(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	lg := translog.New(m, mustKey(t, "test.example/log"))
	var old translog.Checkpoint
	for i := range 600 { // past two full tiles of 256
		m.append(t, publishRecord(i))
		if i == 99 {
			var err error
			if old, err = lg.Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	cp, err := lg.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Size != 600 || old.Size != 100 {
		t.Fatalf("checkpoint sizes %d and %d, want 100 and 600", old.Size, cp.Size)
	}
	if _, err := translog.OpenCheckpoint(cp.Note, lg.Key().Verifier); err != nil {
		t.Fatalf("checkpoint does not verify: %v", err)
	}
	for _, i := range []int64{0, 1, 255, 256, 511, 599} {
		p, err := lg.ProveRecord(ctx, i, cp.Size)
		if err != nil {
			t.Fatal(err)
		}
		if err := tlog.CheckRecord(p, cp.Size, cp.Hash, i, tlog.RecordHash(m.texts[i])); err != nil {
			t.Errorf("record %d: %v", i, err)
		}
		if err := tlog.CheckRecord(p, cp.Size, cp.Hash, i, tlog.RecordHash([]byte("forged\n"))); err == nil {
			t.Errorf("record %d: a forged leaf verified", i)
		}
	}
	tp, err := lg.ProveTree(ctx, cp.Size, old.Size)
	if err != nil {
		t.Fatal(err)
	}
	if err := tlog.CheckTree(tp, cp.Size, cp.Hash, old.Size, old.Hash); err != nil {
		t.Errorf("tree %d is not an extension of %d: %v", cp.Size, old.Size, err)
	}
	// A client holding only the checkpoint recomputes the root from tiles.
	hr := tlog.TileHashReader(tlog.Tree{N: cp.Size, Hash: cp.Hash}, tileReader{ctx, lg})
	th, err := tlog.TreeHash(cp.Size, hr)
	if err != nil || th != cp.Hash {
		t.Errorf("tree hash from tiles = %v, %v; want %v", th, err, cp.Hash)
	}
	p, err := tlog.ProveRecord(cp.Size, 300, hr)
	if err != nil || tlog.CheckRecord(p, cp.Size, cp.Hash, 300, tlog.RecordHash(m.texts[300])) != nil {
		t.Errorf("record 300 via tiles: %v", err)
	}
}

func TestLogDataTilesAndRange(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	lg := translog.New(m, mustKey(t, "test.example/log"))
	for i := range 300 {
		m.append(t, publishRecord(i))
	}
	data, err := lg.Tile(ctx, tlog.Tile{H: translog.TileHeight, L: -1, N: 1, W: 44})
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Join(m.texts[256:300], []byte("\n"))
	if !bytes.Equal(data, append(want, '\n')) {
		t.Errorf("data tile 1 (44 records) =\n%.300s", data)
	}
	for _, tile := range []tlog.Tile{
		{H: translog.TileHeight, L: -1, N: 1, W: 45},
		{H: translog.TileHeight, L: 0, N: 1, W: 256},
		{H: translog.TileHeight, L: 1, N: 0, W: 2},
		{H: 4, L: 0, N: 0, W: 16},
	} {
		if _, err := lg.Tile(ctx, tile); !errors.Is(err, translog.ErrTileRange) {
			t.Errorf("Tile(%s) = %v, want ErrTileRange", tile.Path(), err)
		}
	}
	full, err := lg.Tile(ctx, tlog.Tile{H: translog.TileHeight, L: 0, N: 0, W: 256})
	if err != nil || len(full) != 256*tlog.HashSize {
		t.Errorf("full tile: %d bytes, %v", len(full), err)
	}
}

func TestLogSignsWhenTheTreeGrows(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	lg := translog.New(m, mustKey(t, "test.example/log"))
	empty, err := lg.Checkpoint(ctx)
	if err != nil || empty.Size != 0 {
		t.Fatalf("empty log checkpoint: %+v, %v", empty, err)
	}
	m.append(t, publishRecord(0))
	cp, err := lg.Checkpoint(ctx)
	if err != nil || cp.Size != 1 || cp.Hash != tlog.RecordHash(m.texts[0]) {
		t.Fatalf("after one append: %+v, %v", cp, err)
	}
	if !bytes.Equal(m.saved[1], cp.Note) {
		t.Error("the signed checkpoint was not saved")
	}
	// A fresh Log (a restart) serves the saved note rather than signing another.
	again, err := translog.New(m, lg.Key()).Checkpoint(ctx)
	if err != nil || !bytes.Equal(again.Note, cp.Note) {
		t.Errorf("after restart: %s, %v; want the saved note", again.Note, err)
	}
	l, err := lg.Lookup(ctx, "p0", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if l.Index != 0 || l.Record != publishRecord(0) || tlog.CheckRecord(l.Proof, l.Checkpoint.Size, l.Checkpoint.Hash, 0, tlog.RecordHash(l.Text)) != nil {
		t.Errorf("lookup = %+v", l)
	}
}

package translog

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/mod/sumdb/tlog"
)

// TileHeight is the height of every tile this log serves (as the Go checksum database: 2^8
// hashes a tile).
const TileHeight = 8

// Storage is what the log reads from the metadata store. Hashes are kept in tlog's stored
// hash layout (tlog.StoredHashIndex), so any backend that can read rows by index can serve
// tiles and proofs.
type Storage interface {
	// LogSize is the number of records committed.
	LogSize(ctx context.Context) (int64, error)
	// ReadHashes returns the stored hashes at the given tlog stored-hash indexes.
	ReadHashes(ctx context.Context, indexes []int64) ([]tlog.Hash, error)
	// RecordTexts returns the leaf bytes of records [start, end).
	RecordTexts(ctx context.Context, start, end int64) ([][]byte, error)
	// LookupRelease returns the index and leaf bytes of id@version's publish record.
	LookupRelease(ctx context.Context, id, version string) (int64, []byte, error)
	// LatestCheckpoint returns the largest signed checkpoint saved, or nil when none is.
	LatestCheckpoint(ctx context.Context) ([]byte, error)
	// SaveCheckpoint keeps a signed checkpoint for a tree size (the first one saved wins).
	SaveCheckpoint(ctx context.Context, size int64, note []byte) error
}

// Log serves the transparency log of one store: signed checkpoints, tiles and proofs.
// It is safe for concurrent use.
type Log struct {
	st     Storage
	key    *Key
	mu     sync.Mutex // one signer at a time
	latest atomic.Pointer[Checkpoint]
}

// New returns the log over st, signing with key.
func New(st Storage, key *Key) *Log { return &Log{st: st, key: key} }

// Key returns the signing key (its VerifierKey is public).
func (l *Log) Key() *Key { return l.key }

func (l *Log) hashes(ctx context.Context) tlog.HashReader {
	return tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) { return l.st.ReadHashes(ctx, idx) })
}

// Checkpoint returns the signed checkpoint of the committed tree, signing (and saving) a new
// one when the tree grew since the last. A crash between a commit and its signing costs
// nothing: the next call signs.
func (l *Log) Checkpoint(ctx context.Context) (Checkpoint, error) {
	size, err := l.st.LogSize(ctx)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("translog: checkpoint: %w", err)
	}
	if cp := l.latest.Load(); cp != nil && cp.Size >= size {
		return *cp, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if cp := l.latest.Load(); cp != nil && cp.Size >= size {
		return *cp, nil
	}
	cp, err := l.savedOrSigned(ctx, size)
	if err != nil {
		return Checkpoint{}, err
	}
	l.latest.Store(&cp)
	return cp, nil
}

func (l *Log) savedOrSigned(ctx context.Context, size int64) (Checkpoint, error) {
	saved, err := l.st.LatestCheckpoint(ctx)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("translog: checkpoint: %w", err)
	}
	if saved != nil {
		// A saved note another key signed (the key was replaced) is signed anew.
		if cp, err := OpenCheckpoint(saved, l.key.Verifier); err == nil && cp.Size >= size {
			return cp, nil
		}
	}
	hash, err := tlog.TreeHash(size, l.hashes(ctx))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("translog: tree hash at %d: %w", size, err)
	}
	cp, err := SignCheckpoint(l.key.Signer, size, hash)
	if err != nil {
		return Checkpoint{}, err
	}
	if err := l.st.SaveCheckpoint(ctx, size, cp.Note); err != nil {
		return Checkpoint{}, fmt.Errorf("translog: save checkpoint: %w", err)
	}
	return cp, nil
}

// ErrTileRange is returned for a tile the tree does not yet cover.
var ErrTileRange = fmt.Errorf("translog: tile beyond the tree")

// Tile returns the bytes of a hash tile or a data tile (t.L == -1: the leaves of the tile's
// records, each followed by a blank line, as tlog data tiles are) within the tree of the
// latest checkpoint.
func (l *Log) Tile(ctx context.Context, t tlog.Tile) ([]byte, error) {
	if t.H != TileHeight {
		return nil, fmt.Errorf("%w: this log's tiles have height %d, not %d", ErrTileRange, TileHeight, t.H)
	}
	cp, err := l.Checkpoint(ctx)
	if err != nil {
		return nil, err
	}
	if !TileInTree(t, cp.Size) {
		return nil, fmt.Errorf("%w: %s needs a tree of more than %d records", ErrTileRange, t.Path(), cp.Size)
	}
	if t.L >= 0 {
		return tlog.ReadTileData(t, l.hashes(ctx))
	}
	start := t.N << t.H
	texts, err := l.st.RecordTexts(ctx, start, start+int64(t.W))
	if err != nil {
		return nil, fmt.Errorf("translog: data tile %s: %w", t.Path(), err)
	}
	var data []byte
	for _, text := range texts {
		data = append(append(data, text...), '\n')
	}
	return data, nil
}

// TileInTree reports whether a tree of size records holds every hash (or record) of t.
func TileInTree(t tlog.Tile, size int64) bool {
	end := t.N<<t.H + int64(t.W)
	if t.L < 0 {
		return end <= size
	}
	shift := t.H * t.L
	// Compare by shifting size down, never end up: a high tile (H*L >= 63) would overflow
	// int64 to 0 and pass for any tree.
	return shift < 63 && end <= size>>uint(shift)
}

// Lookup is a release's publish record with its proof of inclusion.
type Lookup struct {
	Index      int64
	Record     Record
	Text       []byte // the leaf bytes
	Proof      tlog.RecordProof
	Checkpoint Checkpoint
}

// Lookup finds id@version's publish record and proves it is in the latest checkpoint.
func (l *Log) Lookup(ctx context.Context, id, version string) (*Lookup, error) {
	idx, text, err := l.st.LookupRelease(ctx, id, version)
	if err != nil {
		return nil, fmt.Errorf("translog: lookup %s@%s: %w", id, version, err)
	}
	rec, err := ParseRecord(text)
	if err != nil {
		return nil, fmt.Errorf("translog: record %d: %w", idx, err)
	}
	cp, err := l.Checkpoint(ctx)
	if err != nil {
		return nil, err
	}
	proof, err := l.ProveRecord(ctx, idx, cp.Size)
	if err != nil {
		return nil, err
	}
	return &Lookup{Index: idx, Record: rec, Text: text, Proof: proof, Checkpoint: cp}, nil
}

// ProveRecord proves that record index is in the tree of size records.
func (l *Log) ProveRecord(ctx context.Context, index, size int64) (tlog.RecordProof, error) {
	p, err := tlog.ProveRecord(size, index, l.hashes(ctx))
	if err != nil {
		return nil, fmt.Errorf("translog: prove record %d in %d: %w", index, size, err)
	}
	return p, nil
}

// ProveTree proves that the tree of size old is a prefix of the tree of size size.
func (l *Log) ProveTree(ctx context.Context, size, old int64) (tlog.TreeProof, error) {
	p, err := tlog.ProveTree(size, old, l.hashes(ctx))
	if err != nil {
		return nil, fmt.Errorf("translog: prove tree %d from %d: %w", size, old, err)
	}
	return p, nil
}

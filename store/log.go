package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/pluginyard/registry/translog"
)

// The transparency log lives in the metadata store: records and their tree hashes are
// written in the transaction that makes the change they record, so the log and the
// releases cannot disagree after a crash. Store implements translog.Storage.
var _ translog.Storage = (*Store)(nil)

// appendLog appends one record inside tx: its leaf and the tree hashes it completes, in
// tlog's stored-hash layout. One writer connection serialises appends.
func appendLog(ctx context.Context, tx *sql.Tx, rec translog.Record) (int64, error) {
	if err := rec.Check(); err != nil {
		return 0, fmt.Errorf("store: log record: %w", err)
	}
	var n int64
	if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(idx) + 1, 0) FROM log_records").Scan(&n); err != nil {
		return 0, fmt.Errorf("store: log size: %w", err)
	}
	text := translog.RecordText(rec)
	hashes, err := tlog.StoredHashes(n, text, txHashes(ctx, tx))
	if err != nil {
		return 0, fmt.Errorf("store: log hashes of record %d: %w", n, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO log_records (idx, kind, package_id, version, sha256, body, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, n, string(rec.Kind), rec.ID, rec.Version, rec.SHA256, text,
		rec.Time.UTC().Format("2006-01-02T15:04:05Z")); err != nil {
		return 0, fmt.Errorf("store: log record %d: %w", n, err)
	}
	base := tlog.StoredHashIndex(0, n)
	for i, h := range hashes {
		if _, err := tx.ExecContext(ctx, "INSERT INTO log_hashes (idx, hash) VALUES (?, ?)", base+int64(i), h[:]); err != nil {
			return 0, fmt.Errorf("store: log hash %d: %w", base+int64(i), err)
		}
	}
	return n, nil
}

// appendPublish records an accepted release.
func appendPublish(ctx context.Context, tx *sql.Tx, rel *Release) error {
	_, err := appendLog(ctx, tx, translog.Record{Kind: translog.KindPublish, ID: rel.PackageID, Version: rel.Version,
		SHA256: rel.SHA256, Signer: signerOf(rel.Signature), Time: rel.CreatedAt})
	return err
}

// appendYank records a yank, an unyank, or (audit detail "delist") a yank that delists.
func (s *Store) appendYank(ctx context.Context, tx *sql.Tx, id, version string, yanked bool, audit AuditEntry) error {
	var sha string
	err := tx.QueryRowContext(ctx, "SELECT sha256 FROM releases WHERE package_id = ? AND version = ?", id, version).Scan(&sha)
	if err != nil {
		return fmt.Errorf("store: log yank %s@%s: %w", id, version, err)
	}
	kind := translog.KindUnyank
	if yanked {
		kind = translog.KindYank
		if delist, _ := audit.Detail["delist"].(bool); delist {
			kind = translog.KindDelist
		}
	}
	_, err = appendLog(ctx, tx, translog.Record{Kind: kind, ID: id, Version: version, SHA256: sha, Time: s.now()})
	return err
}

// appendDeprecate records a deprecation, or with an empty reason its end.
func (s *Store) appendDeprecate(ctx context.Context, tx *sql.Tx, id, reason string) error {
	kind := translog.KindDeprecate
	if reason == "" {
		kind = translog.KindUndeprecate
	}
	_, err := appendLog(ctx, tx, translog.Record{Kind: kind, ID: id, Time: s.now()})
	return err
}

// signerOf is the identity a publish record names: what the index shows as the signer
// (the certificate's SAN for Sigstore, the key fingerprint for ed25519), or
// translog.Unsigned.
func signerOf(sig json.RawMessage) string {
	if len(sig) == 0 {
		return translog.Unsigned
	}
	var r struct {
		Type           string `json:"type"`
		SAN            string `json:"san"`
		KeyFingerprint string `json:"key_fingerprint"`
	}
	if json.Unmarshal(sig, &r) != nil {
		return translog.Unsigned
	}
	id := r.SAN
	if r.Type == "ed25519" {
		id = r.KeyFingerprint
	}
	if id == "" {
		return r.Type
	}
	return id
}

type rowsQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func txHashes(ctx context.Context, q rowsQuerier) tlog.HashReader {
	return tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) { return readHashes(ctx, q, idx) })
}

// readHashes reads stored hashes by index, in the order asked, in batches of 500.
func readHashes(ctx context.Context, q rowsQuerier, indexes []int64) ([]tlog.Hash, error) {
	found := make(map[int64]tlog.Hash, len(indexes))
	for start := 0; start < len(indexes); start += 500 {
		batch := indexes[start:min(start+500, len(indexes))]
		if err := readHashBatch(ctx, q, batch, found); err != nil {
			return nil, err
		}
	}
	out := make([]tlog.Hash, len(indexes))
	for i, idx := range indexes {
		h, ok := found[idx]
		if !ok {
			return nil, fmt.Errorf("store: log hash %d: %w", idx, ErrNotFound)
		}
		out[i] = h
	}
	return out, nil
}

func readHashBatch(ctx context.Context, q rowsQuerier, batch []int64, found map[int64]tlog.Hash) error {
	args := make([]any, len(batch))
	for i, v := range batch {
		args[i] = v
	}
	rows, err := q.QueryContext(ctx, "SELECT idx, hash FROM log_hashes WHERE idx IN (?"+strings.Repeat(", ?", len(batch)-1)+")", args...)
	if err != nil {
		return fmt.Errorf("store: log hashes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			idx int64
			b   []byte
		)
		if err := rows.Scan(&idx, &b); err != nil {
			return fmt.Errorf("store: log hashes: %w", err)
		}
		if len(b) != tlog.HashSize {
			return fmt.Errorf("store: log hash %d is %d bytes, not %d", idx, len(b), tlog.HashSize)
		}
		found[idx] = tlog.Hash(b)
	}
	return rows.Err()
}

// ReadHashes returns stored tree hashes by tlog stored-hash index.
func (s *Store) ReadHashes(ctx context.Context, indexes []int64) ([]tlog.Hash, error) {
	return readHashes(ctx, s.r, indexes)
}

// LogSize returns the number of records in the log.
func (s *Store) LogSize(ctx context.Context) (int64, error) {
	var n int64
	if err := s.r.QueryRowContext(ctx, "SELECT COALESCE(MAX(idx) + 1, 0) FROM log_records").Scan(&n); err != nil {
		return 0, fmt.Errorf("store: log size: %w", err)
	}
	return n, nil
}

// RecordTexts returns the leaf bytes of records [start, end).
func (s *Store) RecordTexts(ctx context.Context, start, end int64) ([][]byte, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT idx, body FROM log_records WHERE idx >= ? AND idx < ? ORDER BY idx", start, end)
	if err != nil {
		return nil, fmt.Errorf("store: log records: %w", err)
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var (
			idx  int64
			body []byte
		)
		if err := rows.Scan(&idx, &body); err != nil {
			return nil, fmt.Errorf("store: log records: %w", err)
		}
		out = append(out, body)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: log records: %w", err)
	}
	if int64(len(out)) != end-start {
		return nil, fmt.Errorf("store: log records [%d, %d): %d found, some are missing: %w", start, end, len(out), ErrNotFound)
	}
	return out, nil
}

// LookupRelease returns the index and leaf bytes of id@version's publish record.
func (s *Store) LookupRelease(ctx context.Context, id, version string) (int64, []byte, error) {
	var (
		idx  int64
		body []byte
	)
	err := s.r.QueryRowContext(ctx, "SELECT idx, body FROM log_records WHERE kind = 'publish' AND package_id = ? AND version = ?",
		id, version).Scan(&idx, &body)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil, ErrNotFound
	}
	if err != nil {
		return 0, nil, fmt.Errorf("store: log lookup %s@%s: %w", id, version, err)
	}
	return idx, body, nil
}

// LogIndexes returns, per version of package id, the index of its publish record.
func (s *Store) LogIndexes(ctx context.Context, id string) (map[string]int64, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT version, idx FROM log_records WHERE kind = 'publish' AND package_id = ?", id)
	if err != nil {
		return nil, fmt.Errorf("store: log indexes of %s: %w", id, err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var (
			v   string
			idx int64
		)
		if err := rows.Scan(&v, &idx); err != nil {
			return nil, fmt.Errorf("store: log indexes of %s: %w", id, err)
		}
		out[v] = idx
	}
	return out, rows.Err()
}

// LatestCheckpoint returns the signed checkpoint of the largest tree saved, nil when none.
func (s *Store) LatestCheckpoint(ctx context.Context) ([]byte, error) {
	var note []byte
	err := s.r.QueryRowContext(ctx, "SELECT note FROM log_checkpoints ORDER BY size DESC LIMIT 1").Scan(&note)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: latest checkpoint: %w", err)
	}
	return note, nil
}

// SaveCheckpoint keeps a signed checkpoint; the first one saved for a size stays.
func (s *Store) SaveCheckpoint(ctx context.Context, size int64, note []byte) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO log_checkpoints (size, note, created_at) VALUES (?, ?, ?) ON CONFLICT (size) DO NOTHING",
			size, note, s.stamp())
		return err
	})
}

// OnLogAppend registers fn to run after every commit that appended to the log (the
// registry signs a new checkpoint there). One function; a later call replaces it.
func (s *Store) OnLogAppend(fn func()) { s.logHook.Store(&fn) }

// logged runs the append hook when a write that appended committed; it returns err.
func (s *Store) logged(err error) error {
	if fn := s.logHook.Load(); err == nil && fn != nil {
		(*fn)()
	}
	return err
}

// backfillLog appends a publish record for every release that has none: releases stored
// before the log existed (migration 0007). On a log still empty it also records the
// current yanks and deprecations, so the log's history ends in the state the store holds.
func (s *Store) backfillLog(ctx context.Context) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var n int64
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM log_records").Scan(&n); err != nil {
			return fmt.Errorf("store: log backfill: %w", err)
		}
		rels, err := unloggedReleases(ctx, tx)
		if err != nil {
			return err
		}
		for _, r := range rels {
			if err := appendPublish(ctx, tx, r); err != nil {
				return err
			}
		}
		if n > 0 || len(rels) == 0 {
			return nil
		}
		return s.backfillState(ctx, tx, rels)
	})
}

func unloggedReleases(ctx context.Context, tx *sql.Tx) ([]*Release, error) {
	rows, err := tx.QueryContext(ctx, `SELECT package_id, version, sha256, signature, yanked, created_at FROM releases r
		WHERE NOT EXISTS (SELECT 1 FROM log_records l WHERE l.kind = 'publish' AND l.package_id = r.package_id AND l.version = r.version)
		ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: log backfill: %w", err)
	}
	defer rows.Close()
	var out []*Release
	for rows.Next() {
		var (
			r       Release
			sig     sql.NullString
			yanked  int
			created string
		)
		if err := rows.Scan(&r.PackageID, &r.Version, &r.SHA256, &sig, &yanked, &created); err != nil {
			return nil, fmt.Errorf("store: log backfill: %w", err)
		}
		r.Yanked, r.CreatedAt = yanked == 1, parseStamp(created)
		if sig.Valid {
			r.Signature = json.RawMessage(sig.String)
		}
		out = append(out, &r)
	}
	return out, rows.Err()
}

func (s *Store) backfillState(ctx context.Context, tx *sql.Tx, rels []*Release) error {
	for _, r := range rels {
		if r.Yanked {
			if err := s.appendYank(ctx, tx, r.PackageID, r.Version, true, AuditEntry{}); err != nil {
				return err
			}
		}
	}
	rows, err := tx.QueryContext(ctx, "SELECT id FROM packages WHERE deprecated_reason IS NOT NULL AND deprecated_reason != '' ORDER BY id")
	if err != nil {
		return fmt.Errorf("store: log backfill: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("store: log backfill: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: log backfill: %w", err)
	}
	for _, id := range ids {
		if err := s.appendDeprecate(ctx, tx, id, "deprecated"); err != nil {
			return err
		}
	}
	return nil
}

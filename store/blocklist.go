package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// Block is one blocklist entry (migration 0015): a sha256 that publish refuses, as the
// digest of a package or of any file inside one.
type Block struct {
	SHA256  string    `json:"sha256"` // lowercase hex
	Reason  string    `json:"reason"`
	AddedBy string    `json:"added_by"`
	AddedAt time.Time `json:"added_at"`
}

// AddBlock adds b (or replaces the reason of an entry for the same digest) with its audit
// entry, in one transaction. It reports whether the digest was new.
func (s *Store) AddBlock(ctx context.Context, b Block, audit AuditEntry) (bool, error) {
	var added bool
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM blocklist WHERE sha256 = ?`, b.SHA256).Scan(&n); err != nil {
			return fmt.Errorf("store: blocklist %s: %w", b.SHA256, err)
		}
		added = n == 0
		_, err := tx.ExecContext(ctx, `INSERT INTO blocklist (sha256, reason, added_by, added_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (sha256) DO UPDATE SET reason = excluded.reason, added_by = excluded.added_by, added_at = excluded.added_at`,
			b.SHA256, b.Reason, b.AddedBy, s.stamp())
		if err != nil {
			return fmt.Errorf("store: blocklist add %s: %w", b.SHA256, err)
		}
		return s.insertAudit(ctx, tx, audit)
	})
	return added, err
}

// RemoveBlock removes the entry for sha with its audit entry; ErrNotFound when there is
// none.
func (s *Store) RemoveBlock(ctx context.Context, sha string, audit AuditEntry) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM blocklist WHERE sha256 = ?`, sha)
		if err != nil {
			return fmt.Errorf("store: blocklist remove %s: %w", sha, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return s.insertAudit(ctx, tx, audit)
	})
}

// Blocks returns every blocklist entry, newest first.
func (s *Store) Blocks(ctx context.Context) ([]Block, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT sha256, reason, added_by, added_at FROM blocklist ORDER BY added_at DESC, sha256`)
	if err != nil {
		return nil, fmt.Errorf("store: blocklist: %w", err)
	}
	return scanBlocks(rows)
}

// blockBatch bounds the digests of one BlockedAmong query (SQLite allows 32766 parameters,
// PostgreSQL 65535; a package has at most 10 000 files).
const blockBatch = 500

// BlockedAmong returns the entries whose digest is one of shas, by digest: one indexed
// lookup per digest, in batches, so the cost follows the package, not the blocklist.
func (s *Store) BlockedAmong(ctx context.Context, shas []string) (map[string]Block, error) {
	out := map[string]Block{}
	for start := 0; start < len(shas); start += blockBatch {
		part := shas[start:min(len(shas), start+blockBatch)]
		args := make([]any, len(part))
		for i, sha := range part {
			args[i] = sha
		}
		q := `SELECT sha256, reason, added_by, added_at FROM blocklist WHERE sha256 IN (?` + strings.Repeat(", ?", len(part)-1) + `)`
		rows, err := s.r.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("store: blocklist lookup: %w", err)
		}
		found, err := scanBlocks(rows)
		if err != nil {
			return nil, err
		}
		for _, b := range found {
			out[b.SHA256] = b
		}
	}
	return out, nil
}

func scanBlocks(rows *sql.Rows) ([]Block, error) {
	defer rows.Close()
	out := []Block{}
	for rows.Next() {
		var (
			b  Block
			at string
		)
		if err := rows.Scan(&b.SHA256, &b.Reason, &b.AddedBy, &at); err != nil {
			return nil, fmt.Errorf("store: blocklist: %w", err)
		}
		b.AddedAt = parseStamp(at)
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: blocklist: %w", err)
	}
	return out, nil
}

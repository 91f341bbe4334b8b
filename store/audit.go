package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// Audit records one audit entry on its own.
func (s *Store) Audit(ctx context.Context, e AuditEntry) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return s.insertAudit(ctx, tx, e) })
}

func (s *Store) insertAudit(ctx context.Context, tx *sql.Tx, e AuditEntry) error {
	if e.Detail == nil {
		e.Detail = map[string]any{}
	}
	detail, err := json.Marshal(e.Detail)
	if err != nil {
		return fmt.Errorf("store: audit detail: %w", err)
	}
	if e.Outcome == "" {
		e.Outcome = "ok"
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO audit (at, actor, action, target, outcome, detail) VALUES (?, ?, ?, ?, ?, ?)`,
		s.stamp(), e.Actor, e.Action, e.Target, e.Outcome, string(detail))
	if err != nil {
		return fmt.Errorf("store: audit: %w", err)
	}
	return nil
}

// AuditLog returns audit entries newest first: at most limit, with ids below before (0 for
// the newest).
func (s *Store) AuditLog(ctx context.Context, limit int, before int64) ([]AuditEntry, error) {
	if before <= 0 {
		before = 1 << 62
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, at, actor, action, target, outcome, detail FROM audit
		WHERE id < ? ORDER BY id DESC LIMIT ?`, before, limit)
	if err != nil {
		return nil, fmt.Errorf("store: audit log: %w", err)
	}
	defer rows.Close()
	out := []AuditEntry{}
	for rows.Next() {
		var (
			e          AuditEntry
			at, detail string
		)
		if err := rows.Scan(&e.ID, &at, &e.Actor, &e.Action, &e.Target, &e.Outcome, &detail); err != nil {
			return nil, fmt.Errorf("store: audit log: %w", err)
		}
		e.At = parseStamp(at)
		if err := json.Unmarshal([]byte(detail), &e.Detail); err != nil {
			return nil, fmt.Errorf("store: audit %d detail: %w", e.ID, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Token is an API token's metadata; the secret itself is never stored, only its sha256.
type Token struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"` // admin | publisher | upload
	Publisher string     `json:"publisher,omitempty"`
	Scope     []string   `json:"scope"` // package ids an upload token may publish
	Note      string     `json:"note,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

const tokenCols = "id, kind, publisher, scope, note, created_at, expires_at, revoked_at"

// CreateToken stores a token under the sha256 hash of its secret, with its audit entry.
func (s *Store) CreateToken(ctx context.Context, t *Token, hash string, audit AuditEntry) error {
	scope, err := json.Marshal(nonNilStrings(t.Scope))
	if err != nil {
		return err
	}
	var exp sql.NullString
	if t.ExpiresAt != nil {
		exp = sql.NullString{String: t.ExpiresAt.UTC().Format(time.RFC3339), Valid: true}
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		now := s.stamp()
		_, err := tx.ExecContext(ctx, `INSERT INTO tokens (id, hash, kind, publisher, scope, note, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, t.ID, hash, t.Kind, t.Publisher, string(scope), t.Note, now, exp)
		if err != nil {
			return fmt.Errorf("store: create token: %w", err)
		}
		t.CreatedAt = parseStamp(now)
		if audit.Action == "" {
			return nil
		}
		return s.insertAudit(ctx, tx, audit)
	})
}

// TokenByHash finds a token by the sha256 of its secret, revoked or not.
func (s *Store) TokenByHash(ctx context.Context, hash string) (*Token, error) {
	return scanToken(s.r.QueryRowContext(ctx, "SELECT "+tokenCols+" FROM tokens WHERE hash = ?", hash))
}

// Tokens lists every token except expired upload tokens, newest first.
func (s *Store) Tokens(ctx context.Context) ([]*Token, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+tokenCols+` FROM tokens
		WHERE NOT (kind = 'upload' AND expires_at < ?) ORDER BY created_at DESC, id`, s.stamp())
	if err != nil {
		return nil, fmt.Errorf("store: tokens: %w", err)
	}
	defer rows.Close()
	var out []*Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// CountTokens counts the live tokens of one kind: neither revoked nor expired.
func (s *Store) CountTokens(ctx context.Context, kind string) (int, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM tokens WHERE kind = ? AND revoked_at IS NULL
		AND (expires_at IS NULL OR expires_at >= ?)`, kind, s.stamp()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count tokens: %w", err)
	}
	return n, nil
}

// RevokeToken revokes a token by id, with its audit entry.
func (s *Store) RevokeToken(ctx context.Context, id string, audit AuditEntry) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, s.stamp(), id)
		if err != nil {
			return fmt.Errorf("store: revoke token: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return s.insertAudit(ctx, tx, audit)
	})
}

func scanToken(sc scanner) (*Token, error) {
	var (
		t                Token
		scope, created   string
		expires, revoked sql.NullString
	)
	err := sc.Scan(&t.ID, &t.Kind, &t.Publisher, &scope, &t.Note, &created, &expires, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: scan token: %w", err)
	}
	if err := json.Unmarshal([]byte(scope), &t.Scope); err != nil {
		return nil, fmt.Errorf("store: token %s scope: %w", t.ID, err)
	}
	t.CreatedAt = parseStamp(created)
	if expires.Valid {
		v := parseStamp(expires.String)
		t.ExpiresAt = &v
	}
	if revoked.Valid {
		v := parseStamp(revoked.String)
		t.RevokedAt = &v
	}
	return &t, nil
}

func nonNilStrings(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

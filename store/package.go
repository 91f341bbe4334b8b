package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Packages returns the curation state of every package id that has a release.
func (s *Store) Packages(ctx context.Context) (map[string]*Package, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, kind, deprecated_reason, deprecated_replacement, stars, pushed_at, created_at, archived_at FROM packages`)
	if err != nil {
		return nil, fmt.Errorf("store: packages: %w", err)
	}
	defer rows.Close()
	out := map[string]*Package{}
	for rows.Next() {
		p, err := scanPackage(rows)
		if err != nil {
			return nil, err
		}
		out[p.ID] = p
	}
	return out, rows.Err()
}

// Package returns one package's curation state.
func (s *Store) Package(ctx context.Context, id string) (*Package, error) {
	row := s.r.QueryRowContext(ctx, `SELECT id, kind, deprecated_reason, deprecated_replacement, stars, pushed_at, created_at, archived_at
		FROM packages WHERE id = ?`, id)
	return scanPackage(row)
}

func scanPackage(sc scanner) (*Package, error) {
	var (
		p            Package
		reason, repl sql.NullString
		stars        sql.NullInt64
		pushed       sql.NullString
		created      string
		archived     sql.NullString
	)
	err := sc.Scan(&p.ID, &p.Kind, &reason, &repl, &stars, &pushed, &created, &archived)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: scan package: %w", err)
	}
	p.DeprecatedReason, p.DeprecatedReplacement = reason.String, repl.String
	if stars.Valid {
		n := int(stars.Int64)
		p.Stars = &n
	}
	if pushed.Valid {
		t := parseStamp(pushed.String)
		p.PushedAt = &t
	}
	p.CreatedAt = parseStamp(created)
	if archived.Valid {
		t := parseStamp(archived.String)
		p.ArchivedAt = &t
	}
	return &p, nil
}

// Deprecate marks (or, with an empty reason, un-marks) a package as deprecated.
func (s *Store) Deprecate(ctx context.Context, id, reason, replacement string, audit AuditEntry) error {
	return s.logged(s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE packages SET deprecated_reason = ?, deprecated_replacement = ? WHERE id = ?`,
			toNull(reason), toNull(replacement), id)
		if err != nil {
			return fmt.Errorf("store: deprecate %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		if err := s.appendDeprecate(ctx, tx, id, reason); err != nil {
			return err
		}
		if err := bumpSerial(ctx, tx, s.change(deprecateChange(reason), id, "")); err != nil {
			return err
		}
		return s.insertAudit(ctx, tx, audit)
	}))
}

// SetRepoStats records a package's forge statistics (stars, last push), as pull sync sees them.
func (s *Store) SetRepoStats(ctx context.Context, id string, stars *int, pushedAt *time.Time) error {
	var st sql.NullInt64
	if stars != nil {
		st = sql.NullInt64{Int64: int64(*stars), Valid: true}
	}
	var pu sql.NullString
	if pushedAt != nil {
		pu = sql.NullString{String: pushedAt.UTC().Format(time.RFC3339), Valid: true}
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE packages SET stars = ?, pushed_at = ? WHERE id = ? AND (stars IS DISTINCT FROM ? OR pushed_at IS DISTINCT FROM ?)`,
			st, pu, id, st, pu)
		if err != nil {
			return fmt.Errorf("store: repo stats %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			return bumpSerial(ctx, tx, s.change(ChangeStats, id, ""))
		}
		return nil
	})
}

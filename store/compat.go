package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ChangeCompat is the change-feed kind of a curation set or cleared on PackageID@Version
// (SetCompat, ClearCompat): what hosts may install of it changed.
const ChangeCompat = "compat"

// Curation is an admin's narrowing of one release's host range (migration 0009): hosts
// newer than MaxKandev may not install it. It has no lower bound: the manifest's
// min_kandev_version is that, so a curation can only narrow what the manifest declares.
type Curation struct {
	PackageID string    `json:"id"`
	Version   string    `json:"version"`
	MaxKandev string    `json:"max_kandev"` // inclusive
	Reason    string    `json:"reason"`
	SetBy     string    `json:"set_by"`
	SetAt     time.Time `json:"set_at"`
}

// SetCompat records (or replaces) the curation of c.PackageID@c.Version with its audit
// entry and bumps the serial, in one transaction; ErrNotFound when no such release is
// stored. The caller has checked MaxKandev against the release's manifest.
func (s *Store) SetCompat(ctx context.Context, c Curation, audit AuditEntry) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		relID, err := releaseID(ctx, tx, c.PackageID, c.Version)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO compat (release_id, max_kandev, reason, set_by, set_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (release_id) DO UPDATE SET max_kandev = excluded.max_kandev, reason = excluded.reason,
			set_by = excluded.set_by, set_at = excluded.set_at`, relID, c.MaxKandev, c.Reason, c.SetBy, s.stamp())
		if err != nil {
			return fmt.Errorf("store: compat %s@%s: %w", c.PackageID, c.Version, err)
		}
		return s.compatChanged(ctx, tx, c.PackageID, c.Version, audit)
	})
}

// ClearCompat removes the curation of id@version with its audit entry; it reports whether
// there was one. Only then is the serial bumped and the audit entry written: a clear that
// changes nothing is no admin action to record. ErrNotFound when no such release exists.
func (s *Store) ClearCompat(ctx context.Context, id, version string, audit AuditEntry) (bool, error) {
	var had bool
	err := s.tx(ctx, func(tx *sql.Tx) error {
		relID, err := releaseID(ctx, tx, id, version)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, "DELETE FROM compat WHERE release_id = ?", relID)
		if err != nil {
			return fmt.Errorf("store: clear compat %s@%s: %w", id, version, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		had = true
		return s.compatChanged(ctx, tx, id, version, audit)
	})
	return had, err
}

func (s *Store) compatChanged(ctx context.Context, tx *sql.Tx, id, version string, audit AuditEntry) error {
	if err := bumpSerial(ctx, tx, s.change(ChangeCompat, id, version)); err != nil {
		return err
	}
	return s.insertAudit(ctx, tx, audit)
}

func releaseID(ctx context.Context, tx *sql.Tx, id, version string) (int64, error) {
	var relID int64
	err := tx.QueryRowContext(ctx, "SELECT id FROM releases WHERE package_id = ? AND version = ?", id, version).Scan(&relID)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("store: release %s@%s: %w", id, version, err)
	}
	return relID, nil
}

// Curations returns the curations of id's releases, by version.
func (s *Store) Curations(ctx context.Context, id string) (map[string]Curation, error) {
	all, err := s.queryCurations(ctx, "WHERE r.package_id = ?", id)
	if err != nil {
		return nil, err
	}
	return all[id], nil
}

// AllCurations returns every curation, by package id and version.
func (s *Store) AllCurations(ctx context.Context) (map[string]map[string]Curation, error) {
	return s.queryCurations(ctx, "")
}

func (s *Store) queryCurations(ctx context.Context, where string, args ...any) (map[string]map[string]Curation, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT r.package_id, r.version, c.max_kandev, c.reason, c.set_by, c.set_at
		FROM compat c JOIN releases r ON r.id = c.release_id `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("store: curations: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]Curation{}
	for rows.Next() {
		var (
			c  Curation
			at string
		)
		if err := rows.Scan(&c.PackageID, &c.Version, &c.MaxKandev, &c.Reason, &c.SetBy, &at); err != nil {
			return nil, fmt.Errorf("store: curations: %w", err)
		}
		c.SetAt = parseStamp(at)
		if out[c.PackageID] == nil {
			out[c.PackageID] = map[string]Curation{}
		}
		out[c.PackageID][c.Version] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: curations: %w", err)
	}
	return out, nil
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/pluginyard/registry/translog"
)

// The change-feed kinds of a quarantine set (or its reason changed) and of its release, on
// PackageID (Version "" for the whole package).
const (
	ChangeQuarantine   = "quarantine"
	ChangeUnquarantine = "unquarantine"
)

// Quarantine is an admin's taking of a whole package (Version "") or one release out of
// reach (migration 0013): out of the index, search and downloads, refused at publish, with
// a public reason. Nothing of the package is deleted; releasing the row restores it.
type Quarantine struct {
	PackageID string    `json:"id"`
	Version   string    `json:"version,omitempty"`
	Reason    string    `json:"reason"`
	SetBy     string    `json:"set_by"`
	SetAt     time.Time `json:"set_at"`
}

// Target is id for a package quarantine, id@version for a release's.
func (q Quarantine) Target() string { return TargetName(q.PackageID, q.Version) }

// TargetName names a whole package (version "") or one of its releases, as audit entries,
// messages and the CLI's ID[@VERSION] argument do: id, or id@version.
func TargetName(id, version string) string {
	if version == "" {
		return id
	}
	return id + "@" + version
}

// SetQuarantine records (or, with a new reason, replaces) q with its audit entry, a log
// record and a serial bump, in one transaction. ErrNotFound when q names a release that is
// not stored, or a package with no release stored. The caller checked the reason.
func (s *Store) SetQuarantine(ctx context.Context, q Quarantine, audit AuditEntry) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		sha, err := quarantineTarget(ctx, tx, q.PackageID, q.Version)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO quarantines (package_id, version, reason, set_by, set_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (package_id, version) DO UPDATE SET reason = excluded.reason, set_by = excluded.set_by, set_at = excluded.set_at`,
			q.PackageID, q.Version, q.Reason, q.SetBy, s.stamp())
		if err != nil {
			return fmt.Errorf("store: quarantine %s: %w", q.Target(), err)
		}
		return s.quarantineChanged(ctx, tx, ChangeQuarantine, translog.KindQuarantine, q.PackageID, q.Version, sha, audit)
	})
}

// ReleaseQuarantine removes the quarantine of id (version "") or id@version with its audit
// entry; it reports whether there was one. Only then are the serial bumped, the log
// appended and the audit entry written: a release that changes nothing is no admin action.
func (s *Store) ReleaseQuarantine(ctx context.Context, id, version string, audit AuditEntry) (bool, error) {
	var had bool
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM quarantines WHERE package_id = ? AND version = ?", id, version)
		if err != nil {
			return fmt.Errorf("store: release quarantine %s@%s: %w", id, version, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		had = true
		sha, err := quarantineTarget(ctx, tx, id, version)
		if err != nil {
			return err
		}
		return s.quarantineChanged(ctx, tx, ChangeUnquarantine, translog.KindUnquarantine, id, version, sha, audit)
	})
	return had, err
}

// quarantineTarget checks that id@version (a release) or id (a package with a release) is
// stored and returns the release's sha256 ("" for a package).
func quarantineTarget(ctx context.Context, tx *sql.Tx, id, version string) (string, error) {
	if version == "" {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM releases WHERE package_id = ?", id).Scan(&n); err != nil {
			return "", fmt.Errorf("store: releases of %s: %w", id, err)
		}
		if n == 0 {
			return "", ErrNotFound
		}
		return "", nil
	}
	var sha string
	err := tx.QueryRowContext(ctx, "SELECT sha256 FROM releases WHERE package_id = ? AND version = ?", id, version).Scan(&sha)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("store: release %s@%s: %w", id, version, err)
	}
	return sha, nil
}

func (s *Store) quarantineChanged(ctx context.Context, tx *sql.Tx, change string, kind translog.Kind, id, version, sha string, audit AuditEntry) error {
	if err := bumpSerial(ctx, tx, s.change(change, id, version)); err != nil {
		return err
	}
	if _, err := appendLog(ctx, tx, translog.Record{Kind: kind, ID: id, Version: version, SHA256: sha, Time: s.now()}); err != nil {
		return err
	}
	return s.insertAudit(ctx, tx, audit)
}

// Quarantines returns every quarantine in force, by package id then version (a package's
// own first).
func (s *Store) Quarantines(ctx context.Context) ([]Quarantine, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT package_id, version, reason, set_by, set_at FROM quarantines ORDER BY package_id, version`)
	if err != nil {
		return nil, fmt.Errorf("store: quarantines: %w", err)
	}
	defer rows.Close()
	out := []Quarantine{}
	for rows.Next() {
		var (
			q  Quarantine
			at string
		)
		if err := rows.Scan(&q.PackageID, &q.Version, &q.Reason, &q.SetBy, &at); err != nil {
			return nil, fmt.Errorf("store: quarantines: %w", err)
		}
		q.SetAt = parseStamp(at)
		out = append(out, q)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: quarantines: %w", err)
	}
	return out, nil
}

package store

import (
	"context"
	"database/sql"
	"fmt"
)

// The change feed's kinds for archiving (migration 0017).
const (
	ChangeArchive   = "archive"   // PackageID was archived: no more releases expected
	ChangeUnarchive = "unarchive" // PackageID is active again
)

// SetArchived archives (archived true) or unarchives a package, with its audit entry and a
// change in the feed, in one transaction. It reports whether anything changed: archiving
// an archived package keeps its first date and records nothing. ErrNotFound when the
// package has no release.
func (s *Store) SetArchived(ctx context.Context, id string, archived bool, audit AuditEntry) (changed bool, err error) {
	err = s.tx(ctx, func(tx *sql.Tx) error {
		var at sql.NullString
		if archived {
			at = sql.NullString{String: s.stamp(), Valid: true}
		}
		res, err := tx.ExecContext(ctx, `UPDATE packages SET archived_at = ? WHERE id = ? AND (CASE WHEN archived_at IS NULL THEN 1 ELSE 0 END) = ?`,
			at, id, archived)
		if err != nil {
			return fmt.Errorf("store: archive %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return s.packageExists(ctx, tx, id)
		}
		changed = true
		kind := ChangeUnarchive
		if archived {
			kind = ChangeArchive
		}
		if err := bumpSerial(ctx, tx, s.change(kind, id, "")); err != nil {
			return err
		}
		return s.insertAudit(ctx, tx, audit)
	})
	return changed, err
}

// packageExists is nil when id has a packages row, else ErrNotFound.
func (s *Store) packageExists(ctx context.Context, tx *sql.Tx, id string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM packages WHERE id = ?`, id).Scan(&n); err != nil {
		return fmt.Errorf("store: package %s: %w", id, err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// archivedLastSQL is the first ORDER BY term of a search without text: active packages
// (false, 0) before archived ones.
const archivedLastSQL = "(id IN (SELECT id FROM packages WHERE archived_at IS NOT NULL))"

// archivedIDs is the set of archived package ids (few: read through packages_archived),
// read on rd: a search reads it in the snapshot of its matches.
func archivedIDs(ctx context.Context, rd searchReader) (map[string]bool, error) {
	rows, err := rd.QueryContext(ctx, `SELECT id FROM packages WHERE archived_at IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("store: archived ids: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: archived ids: %w", err)
		}
		out[id] = true
	}
	return out, rows.Err()
}

// archivedAfter orders rows of archived packages after the others, each part in order.
func archivedAfter(archived map[string]bool, order func(a, b searchRow) int) func(a, b searchRow) int {
	if len(archived) == 0 {
		return order
	}
	return func(a, b searchRow) int {
		if x, y := archived[a.id], archived[b.id]; x != y {
			if y {
				return -1
			}
			return 1
		}
		return order(a, b)
	}
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"
)

// Report is one report of a package (or one of its versions) by someone on the web or the
// API. The reporter is only their address's keyed hash (ingest computes it); the store
// never sees the address.
type Report struct {
	ID           int64     `json:"id"`
	PackageID    string    `json:"package_id"`
	Version      string    `json:"version,omitempty"` // "" for the whole package
	Kind         string    `json:"kind"`              // malicious, broken or other
	Reason       string    `json:"reason"`
	ReporterHash string    `json:"reporter_hash"`
	CreatedAt    time.Time `json:"created_at"`
	// Resolution is nil while the report is open.
	Resolution *Resolution `json:"resolution,omitempty"`
}

// Resolution is how an admin closed a report: a text for the package page and the audit
// log, and the action it led to (none, yanked, quarantined or deprecated).
type Resolution struct {
	At     time.Time `json:"at"`
	By     string    `json:"by"`
	Text   string    `json:"text"`
	Action string    `json:"action"`
}

// ReportQuery selects reports, newest first.
type ReportQuery struct {
	OpenOnly  bool   // only reports not yet resolved
	PackageID string // "" for every package
	Limit     int    // at most this many (default and ceiling 500)
	// Actioned keeps only resolved reports whose action was not "none": what a package
	// page shows.
	Actioned bool
}

const reportColumns = `id, package_id, version, kind, reason, reporter_hash, created_at, resolved_at, resolved_by, resolution, action`

// AddReport records r (its ID and CreatedAt are set) and its audit entry in one
// transaction. It is ErrNotFound when r.PackageID has no package row, and ErrConflict when
// the same reporter already has an open report of the same package, version and kind.
func (s *Store) AddReport(ctx context.Context, r *Report, audit AuditEntry) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.packageExists(ctx, tx, r.PackageID); err != nil {
			return fmt.Errorf("store: report %s: %w", r.PackageID, err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM reports WHERE package_id = ? AND version = ? AND kind = ?
			AND reporter_hash = ? AND resolved_at IS NULL`, r.PackageID, r.Version, r.Kind, r.ReporterHash).Scan(&n); err != nil {
			return fmt.Errorf("store: report %s: %w", r.PackageID, err)
		}
		if n > 0 {
			return fmt.Errorf("store: report %s: an open one by the same reporter: %w", r.PackageID, ErrConflict)
		}
		at := s.stamp()
		err := tx.QueryRowContext(ctx, `INSERT INTO reports (package_id, version, kind, reason, reporter_hash, created_at)
			VALUES (?, ?, ?, ?, ?, ?) RETURNING id`, r.PackageID, r.Version, r.Kind, r.Reason, r.ReporterHash, at).Scan(&r.ID)
		if err != nil {
			return fmt.Errorf("store: report %s: %w", r.PackageID, err)
		}
		r.CreatedAt = parseStamp(at)
		return s.insertAudit(ctx, tx, withDetail(audit, "report", r.ID))
	})
}

// withDetail returns e with key set in a copy of its detail.
func withDetail(e AuditEntry, key string, v any) AuditEntry {
	d := make(map[string]any, len(e.Detail)+1)
	maps.Copy(d, e.Detail)
	d[key] = v
	e.Detail = d
	return e
}

// Report returns one report by id.
func (s *Store) Report(ctx context.Context, id int64) (*Report, error) {
	r, err := scanReport(s.r.QueryRowContext(ctx, `SELECT `+reportColumns+` FROM reports WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("store: report %d: %w", id, err)
	}
	return r, nil
}

// Reports returns the reports q selects, newest first.
func (s *Store) Reports(ctx context.Context, q ReportQuery) ([]Report, error) {
	var (
		where []string
		args  []any
	)
	if q.OpenOnly {
		where = append(where, "resolved_at IS NULL")
	}
	if q.Actioned {
		where = append(where, "resolved_at IS NOT NULL AND action <> 'none'")
	}
	if q.PackageID != "" {
		where = append(where, "package_id = ?")
		args = append(args, q.PackageID)
	}
	if q.Limit <= 0 || q.Limit > 500 {
		q.Limit = 500
	}
	query := `SELECT ` + reportColumns + ` FROM reports`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := s.r.QueryContext(ctx, query+" ORDER BY id DESC LIMIT ?", append(args, q.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: reports: %w", err)
	}
	defer rows.Close()
	out := []Report{}
	for rows.Next() {
		r, err := scanReport(rows)
		if err != nil {
			return nil, fmt.Errorf("store: reports: %w", err)
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}

// ResolveReport closes an open report with res (its At is set) and records audit in the
// same transaction. It is ErrNotFound for an unknown id and ErrConflict for a report
// already resolved (whose resolution stays as it was).
func (s *Store) ResolveReport(ctx context.Context, id int64, res Resolution, audit AuditEntry) (*Report, error) {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		at := s.stamp()
		out, err := tx.ExecContext(ctx, `UPDATE reports SET resolved_at = ?, resolved_by = ?, resolution = ?, action = ?
			WHERE id = ? AND resolved_at IS NULL`, at, res.By, res.Text, res.Action, id)
		if err != nil {
			return fmt.Errorf("store: resolve report %d: %w", id, err)
		}
		n, err := out.RowsAffected()
		if err != nil {
			return fmt.Errorf("store: resolve report %d: %w", id, err)
		}
		if n == 1 {
			return s.insertAudit(ctx, tx, withDetail(audit, "report", id))
		}
		var open sql.NullString
		err = tx.QueryRowContext(ctx, `SELECT resolved_at FROM reports WHERE id = ?`, id).Scan(&open)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: resolve report %d: %w", id, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("store: resolve report %d: %w", id, err)
		}
		return fmt.Errorf("store: resolve report %d: resolved at %s: %w", id, open.String, ErrConflict)
	})
	if err != nil {
		return nil, err
	}
	return s.Report(ctx, id)
}

func scanReport(sc scanner) (*Report, error) {
	var (
		r                       Report
		created                 string
		resAt, resBy, text, act sql.NullString
	)
	err := sc.Scan(&r.ID, &r.PackageID, &r.Version, &r.Kind, &r.Reason, &r.ReporterHash, &created, &resAt, &resBy, &text, &act)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	r.CreatedAt = parseStamp(created)
	if resAt.Valid {
		r.Resolution = &Resolution{At: parseStamp(resAt.String), By: resBy.String, Text: text.String, Action: act.String}
	}
	return &r, nil
}

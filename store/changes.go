package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// The kinds of change the feed records, one per serial bump.
const (
	ChangePublish     = "publish"     // a release of PackageID at Version was published
	ChangeYank        = "yank"        // PackageID@Version was yanked
	ChangeUnyank      = "unyank"      // PackageID@Version was un-yanked
	ChangeYankAll     = "yank_all"    // every live version of PackageID was yanked (a delisting)
	ChangeDeprecate   = "deprecate"   // PackageID was deprecated, or its reason changed
	ChangeUndeprecate = "undeprecate" // PackageID's deprecation was cleared
	ChangeStats       = "stats"       // PackageID's forge statistics (stars, last push) changed
	ChangeList        = "list"        // the curated list was reloaded: any package may be (de)listed
)

// Change is one recorded change of what the index shows: the serial it bumped to.
type Change struct {
	Serial    int64
	PackageID string // "" for a list reload
	Kind      string // one of the Change* constants
	Version   string // the release a publish, yank or unyank names; "" otherwise
	At        time.Time
}

// bumpSerial increments the serial and records what changed under the new serial, in the
// transaction of the change itself: the feed holds exactly one change per bump, or the
// whole transaction fails.
func bumpSerial(ctx context.Context, tx *sql.Tx, c Change) error {
	var serial int64
	err := tx.QueryRowContext(ctx, "UPDATE meta SET value = CAST(value AS BIGINT) + 1 WHERE key = 'serial' RETURNING CAST(value AS BIGINT)").Scan(&serial)
	if err != nil {
		return fmt.Errorf("store: bump serial: %w", err)
	}
	var pkg sql.NullString
	if c.PackageID != "" {
		pkg = sql.NullString{String: c.PackageID, Valid: true}
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO changes (serial, package_id, change, version, at) VALUES (?, ?, ?, ?, ?)",
		serial, pkg, c.Kind, c.Version, c.At.UTC().Format(time.RFC3339)); err != nil {
		return fmt.Errorf("store: record change %d (%s %s): %w", serial, c.Kind, c.PackageID, err)
	}
	return nil
}

// FeedSerials returns the current serial and the serial after which the feed is complete
// (ChangePage.CompleteSince), read together.
func (s *Store) FeedSerials(ctx context.Context) (serial, completeSince int64, err error) {
	return feedSerials(ctx, s.r)
}

func feedSerials(ctx context.Context, q querier) (serial, completeSince int64, err error) {
	err = q.QueryRowContext(ctx, `SELECT CAST((SELECT value FROM meta WHERE key = 'serial') AS INTEGER),
		CAST((SELECT value FROM meta WHERE key = 'changes_complete_since') AS INTEGER)`).Scan(&serial, &completeSince)
	if err != nil {
		return 0, 0, fmt.Errorf("store: feed serials: %w", err)
	}
	return serial, completeSince, nil
}

// change is a Change of kind to id@version, stamped now.
func (s *Store) change(kind, id, version string) Change {
	return Change{Kind: kind, PackageID: id, Version: version, At: parseStamp(s.stamp())}
}

// ChangePage is one page of the feed, read in one snapshot of the database.
type ChangePage struct {
	// Serial is the current serial: a client that applied every change of the feed up to
	// here is at Serial.
	Serial int64
	// CompleteSince is the serial after which the feed holds every change: the serial of
	// the database when the feed began (0 on a database that had it from the start).
	CompleteSince int64
	// Changes are those after the asked serial, in serial order, at most the asked limit.
	Changes []Change
	// More: there are changes after the last one of Changes.
	More bool
}

// Changes returns at most limit changes with a serial above since, in serial order, with
// the current serial, all from one snapshot (a change committed meanwhile is in neither).
// Its cost is bounded by limit: the serial is the table's key.
func (s *Store) Changes(ctx context.Context, since int64, limit int) (*ChangePage, error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("store: changes: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	p := &ChangePage{Changes: []Change{}}
	if p.Serial, p.CompleteSince, err = feedSerials(ctx, tx); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, "SELECT serial, package_id, change, version, at FROM changes WHERE serial > ? ORDER BY serial LIMIT ?", since, limit+1)
	if err != nil {
		return nil, fmt.Errorf("store: changes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			c   Change
			pkg sql.NullString
			at  string
		)
		if err := rows.Scan(&c.Serial, &pkg, &c.Kind, &c.Version, &at); err != nil {
			return nil, fmt.Errorf("store: changes: %w", err)
		}
		c.PackageID, c.At = pkg.String, parseStamp(at)
		p.Changes = append(p.Changes, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: changes: %w", err)
	}
	if len(p.Changes) > limit {
		p.Changes, p.More = p.Changes[:limit], true
	}
	return p, nil
}

func yankChange(yanked bool) string {
	if yanked {
		return ChangeYank
	}
	return ChangeUnyank
}

// deprecateChange: an empty reason clears the deprecation (Deprecate).
func deprecateChange(reason string) string {
	if reason == "" {
		return ChangeUndeprecate
	}
	return ChangeDeprecate
}

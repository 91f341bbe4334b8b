package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// DownloadDay keys the downloads of one release on one UTC day.
type DownloadDay struct {
	ReleaseID int64
	Day       string // YYYY-MM-DD, UTC
}

// DayOf is the DownloadDay.Day of a moment.
func DayOf(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// DayCount is a package's counted downloads on one UTC day.
type DayCount struct {
	Day       string // YYYY-MM-DD
	Downloads int64
}

// RecordDownloads adds counted downloads, per release and day, to each release's counter
// and to its package's daily count, all in one transaction: a batch is recorded whole or
// not at all, so a caller may retry it.
func (s *Store) RecordDownloads(ctx context.Context, counts map[DownloadDay]int64) error {
	if len(counts) == 0 {
		return nil
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		rel, err := tx.PrepareContext(ctx, "UPDATE releases SET downloads = downloads + ? WHERE id = ?")
		if err != nil {
			return fmt.Errorf("store: record downloads: %w", err)
		}
		defer rel.Close()
		daily, err := tx.PrepareContext(ctx, `INSERT INTO downloads_daily (package_id, day, downloads)
			SELECT package_id, ?, ? FROM releases WHERE id = ?
			ON CONFLICT (package_id, day) DO UPDATE SET downloads = downloads_daily.downloads + excluded.downloads`)
		if err != nil {
			return fmt.Errorf("store: record downloads: %w", err)
		}
		defer daily.Close()
		for k, n := range counts {
			if _, err := rel.ExecContext(ctx, n, k.ReleaseID); err != nil {
				return fmt.Errorf("store: record downloads of release %d: %w", k.ReleaseID, err)
			}
			if _, err := daily.ExecContext(ctx, k.Day, n, k.ReleaseID); err != nil {
				return fmt.Errorf("store: record downloads of release %d on %s: %w", k.ReleaseID, k.Day, err)
			}
		}
		return nil
	})
}

// DailyDownloads returns a package's downloads per UTC day from the day `from` (YYYY-MM-DD)
// on, oldest first; days without downloads are absent.
func (s *Store) DailyDownloads(ctx context.Context, packageID, from string) ([]DayCount, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT day, downloads FROM downloads_daily WHERE package_id = ? AND day >= ? ORDER BY day`,
		packageID, from)
	if err != nil {
		return nil, fmt.Errorf("store: daily downloads of %s: %w", packageID, err)
	}
	defer rows.Close()
	var out []DayCount
	for rows.Next() {
		var d DayCount
		if err := rows.Scan(&d.Day, &d.Downloads); err != nil {
			return nil, fmt.Errorf("store: daily downloads of %s: %w", packageID, err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: daily downloads of %s: %w", packageID, err)
	}
	return out, nil
}

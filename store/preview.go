package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
	"unicode/utf8"
)

// Preview is what the registry knows of one preview image URL from plugins.yaml: the copy
// it keeps (SHA256 set) or why the last attempt to fetch one failed (Rule and Error set).
type Preview struct {
	URL         string
	SHA256      string // the blob of the copy; "" until a fetch succeeded
	ContentType string // image/png, image/jpeg or image/webp, sniffed from the bytes
	Size        int64
	FetchedAt   time.Time // zero until a fetch succeeded
	AttemptedAt time.Time
	Attempts    int
	Rule        string // the rule id of the last failure, e.g. "preview.size"
	Error       string // what the last failure was
}

// Fetched reports whether the registry holds a copy of the image.
func (p *Preview) Fetched() bool { return p.SHA256 != "" }

// maxPreviewError bounds a recorded failure message (the column's CHECK).
const maxPreviewError = 1024

// Previews returns every preview URL the registry has tried, by URL.
func (s *Store) Previews(ctx context.Context) (map[string]*Preview, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+previewColumns+" FROM previews")
	if err != nil {
		return nil, fmt.Errorf("store: previews: %w", err)
	}
	defer rows.Close()
	out := map[string]*Preview{}
	for rows.Next() {
		p, err := scanPreview(rows)
		if err != nil {
			return nil, fmt.Errorf("store: previews: %w", err)
		}
		out[p.URL] = p
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: previews: %w", err)
	}
	return out, nil
}

// RecordPreviewFetched records the copy of url: the blob sha, whose file the caller has
// already made durable (Blobs.Put), with its size and sniffed content type. The blob row
// and the preview row are committed together. A URL that already has a copy keeps it, and
// then sha gets no row of its own (unless something else records it): its file is an
// unrecorded orphan, which serve's start-up sweep removes, never a recorded blob that
// nothing uses and nothing would ever remove.
func (s *Store) RecordPreviewFetched(ctx context.Context, url, sha, contentType string, size int64) (*Preview, error) {
	now := s.stamp()
	err := s.tx(ctx, func(tx *sql.Tx) error {
		inserted, err := insertBlob(ctx, tx, sha, size, now)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO previews (url, sha256, content_type, size, fetched_at, attempted_at, attempts)
			VALUES (?, ?, ?, ?, ?, ?, 1)
			ON CONFLICT (url) DO UPDATE SET sha256 = excluded.sha256, content_type = excluded.content_type,
				size = excluded.size, fetched_at = excluded.fetched_at, attempted_at = excluded.attempted_at,
				attempts = previews.attempts + 1, error_rule = NULL, last_error = NULL
			WHERE previews.sha256 IS NULL`, url, sha, contentType, size, now, now)
		if err != nil {
			return err
		}
		took, err := res.RowsAffected()
		if err == nil && took == 0 && inserted {
			// The URL kept its copy, and the row just made for sha is this transaction's
			// alone (no other row can refer to it yet).
			_, err = tx.ExecContext(ctx, `DELETE FROM blobs WHERE sha256 = ?`, sha)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: record preview %s: %w", url, err)
	}
	return s.preview(ctx, url)
}

// RecordPreviewFailed records a failed attempt to fetch url, with the rule it broke and
// what happened (cut to 1024 bytes). A URL that already has a copy keeps it.
func (s *Store) RecordPreviewFailed(ctx context.Context, url, rule, msg string) (*Preview, error) {
	now := s.stamp()
	msg = cutUTF8(msg, maxPreviewError)
	err := s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO previews (url, attempted_at, attempts, error_rule, last_error)
			VALUES (?, ?, 1, ?, ?)
			ON CONFLICT (url) DO UPDATE SET attempted_at = excluded.attempted_at, attempts = previews.attempts + 1,
				error_rule = excluded.error_rule, last_error = excluded.last_error
			WHERE previews.sha256 IS NULL`, url, now, rule, msg)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: record preview failure %s: %w", url, err)
	}
	return s.preview(ctx, url)
}

// preview reads one row back, on the writer so that it sees the commit just made.
func (s *Store) preview(ctx context.Context, url string) (*Preview, error) {
	p, err := scanPreview(s.w.QueryRowContext(ctx, "SELECT "+previewColumns+" FROM previews WHERE url = ?", url))
	if err != nil {
		return nil, fmt.Errorf("store: preview %s: %w", url, err)
	}
	return p, nil
}

const previewColumns = "url, sha256, content_type, size, fetched_at, attempted_at, attempts, error_rule, last_error"

func scanPreview(r scanner) (*Preview, error) {
	var p Preview
	var sha, ct, fetched, rule, msg sql.NullString
	var size sql.NullInt64
	var attempted string
	if err := r.Scan(&p.URL, &sha, &ct, &size, &fetched, &attempted, &p.Attempts, &rule, &msg); err != nil {
		return nil, err
	}
	p.SHA256, p.ContentType, p.Size, p.Rule, p.Error = sha.String, ct.String, size.Int64, rule.String, msg.String
	p.AttemptedAt = parseStamp(attempted)
	if fetched.Valid {
		p.FetchedAt = parseStamp(fetched.String)
	}
	return &p, nil
}

// cutUTF8 shortens s to at most n bytes without splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

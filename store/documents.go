package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// StoredDocument is one index document as the replica that built it for a serial stored
// it (the documents table): the others serve these bytes rather than their own build, so
// that every replica answers with the same body and ETag for the same serial.
type StoredDocument struct {
	Serial      int64
	Name        string    // DocumentKandev or DocumentCurupira
	ETag        string    // the ETag the builder served the body with
	GeneratedAt time.Time // the documents' generated_at, to the nanosecond
	Meta        []byte    // the builder's JSON summary (entries, mode); "{}" when empty
	Body        []byte
	BuiltBy     string // the replica that built it, for logs
}

// The documents a serial's build stores.
const (
	DocumentKandev   = "kandev"   // index.json
	DocumentCurupira = "curupira" // curupira/index.json
)

// DocumentsKept is how many serials' documents the table keeps: a replica that fell
// further behind builds its own catch-up (it is behind the feed, so no other replica
// will store that serial again).
const DocumentsKept = 8

// PutDocuments stores docs, the documents of one serial, unless that serial has documents
// already: the first builder of a serial wins, and stored reports whether that was this
// call. Serials more than DocumentsKept below it are removed in the same transaction.
//
// It does not take the write lock every other write takes on PostgreSQL: bodies of up to
// a few MiB must not hold up every replica's publishes, and the serial's primary key
// settles a race (the second insert waits for the first to commit, then inserts nothing).
func (s *Store) PutDocuments(ctx context.Context, docs []StoredDocument) (stored bool, err error) {
	if len(docs) == 0 {
		return false, errors.New("store: put documents: no document given")
	}
	serial := docs[0].Serial
	for _, d := range docs {
		if d.Serial != serial {
			return false, fmt.Errorf("store: put documents: %s is of serial %d, the others of %d; store one serial at a time", d.Name, d.Serial, serial)
		}
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store: put documents: begin: %w", s.unavailable(err))
	}
	defer func() { _ = tx.Rollback() }()
	if s.dialect == Postgres {
		// Derived data: a commit lost to a crash costs a rebuild, not a release, so it
		// does not wait for the WAL to reach the disk.
		if _, err := tx.ExecContext(ctx, "SET LOCAL synchronous_commit TO OFF"); err != nil {
			return false, fmt.Errorf("store: put documents: %w", s.unavailable(err))
		}
	}
	for i, d := range docs {
		n, err := insertDocument(ctx, tx, d)
		if err != nil {
			return false, s.unavailable(err)
		}
		if n == 0 && i == 0 {
			return false, nil // another builder stored this serial first
		}
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM documents WHERE serial <= ?", serial-DocumentsKept); err != nil {
		return false, fmt.Errorf("store: prune documents below serial %d: %w", serial-DocumentsKept, s.unavailable(err))
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store: put documents of serial %d: commit: %w", serial, s.unavailable(err))
	}
	return true, nil
}

// insertDocument inserts d unless its serial and name are stored; it returns the rows
// inserted (0 or 1).
func insertDocument(ctx context.Context, tx *sql.Tx, d StoredDocument) (int64, error) {
	meta := string(d.Meta)
	if meta == "" {
		meta = "{}"
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO documents (serial, name, etag, generated_at, meta, body, built_by)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (serial, name) DO NOTHING`, d.Serial, d.Name, d.ETag, d.GeneratedAt.UnixNano(), meta, d.Body, d.BuiltBy)
	if err != nil {
		return 0, fmt.Errorf("store: put document %s of serial %d: %w", d.Name, d.Serial, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: put document %s of serial %d: %w", d.Name, d.Serial, err)
	}
	return n, nil
}

// Documents returns the stored documents of serial, by name; none (an empty slice) when
// no replica stored that serial's.
func (s *Store) Documents(ctx context.Context, serial int64) ([]StoredDocument, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT serial, name, etag, generated_at, meta, body, built_by
		FROM documents WHERE serial = ? ORDER BY name`, serial)
	if err != nil {
		return nil, fmt.Errorf("store: documents of serial %d: %w", serial, s.unavailable(err))
	}
	defer rows.Close()
	out := []StoredDocument{}
	for rows.Next() {
		var (
			d    StoredDocument
			at   int64
			meta string
		)
		if err := rows.Scan(&d.Serial, &d.Name, &d.ETag, &at, &meta, &d.Body, &d.BuiltBy); err != nil {
			return nil, fmt.Errorf("store: documents of serial %d: %w", serial, s.unavailable(err))
		}
		d.GeneratedAt, d.Meta = time.Unix(0, at).UTC(), []byte(meta)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: documents of serial %d: %w", serial, s.unavailable(err))
	}
	return out, nil
}

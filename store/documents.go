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
func (s *Store) PutDocuments(ctx context.Context, docs []StoredDocument) (stored bool, err error) {
	if len(docs) == 0 {
		return false, errors.New("store: put documents: no document given")
	}
	serial := docs[0].Serial
	err = s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM documents WHERE serial = ?", serial).Scan(&n); err != nil {
			return fmt.Errorf("store: documents of serial %d: %w", serial, err)
		}
		if n > 0 {
			return nil
		}
		for _, d := range docs {
			if d.Serial != serial {
				return fmt.Errorf("store: put documents: %s is of serial %d, the others of %d; store one serial at a time", d.Name, d.Serial, serial)
			}
			if err := insertDocument(ctx, tx, d); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM documents WHERE serial <= ?", serial-DocumentsKept); err != nil {
			return fmt.Errorf("store: prune documents below serial %d: %w", serial-DocumentsKept, err)
		}
		stored = true
		return nil
	})
	return stored, err
}

func insertDocument(ctx context.Context, tx *sql.Tx, d StoredDocument) error {
	meta := string(d.Meta)
	if meta == "" {
		meta = "{}"
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO documents (serial, name, etag, generated_at, meta, body, built_by)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, d.Serial, d.Name, d.ETag, d.GeneratedAt.UnixNano(), meta, d.Body, d.BuiltBy)
	if err != nil {
		return fmt.Errorf("store: put document %s of serial %d: %w", d.Name, d.Serial, err)
	}
	return nil
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

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Pin is the GitHub repository and owner ids first seen for a subject (a package id, or a
// repository for OIDC publishing). Later releases must carry the same ids. A package's
// Sigstore pin also names the workflow that signed its last verified release, so that a
// later release signed by another workflow, or not signed at all, is refused (provenance
// never downgrades).
type Pin struct {
	Subject      string    `json:"subject"`
	Repository   string    `json:"repository"`
	RepositoryID string    `json:"repository_id"`
	OwnerID      string    `json:"owner_id"`
	Workflow     string    `json:"workflow,omitempty"` // sigstore pins; "" before it was recorded
	Source       string    `json:"source"`             // sigstore | oidc | sync
	PinnedAt     time.Time `json:"pinned_at"`
}

// GetPin returns the pin of a subject, or ErrNotFound.
func (s *Store) GetPin(ctx context.Context, subject string) (*Pin, error) {
	var (
		p  Pin
		at string
	)
	err := s.r.QueryRowContext(ctx, `SELECT subject, repository, repository_id, owner_id, workflow, source, pinned_at FROM pins WHERE subject = ?`,
		subject).Scan(&p.Subject, &p.Repository, &p.RepositoryID, &p.OwnerID, &p.Workflow, &p.Source, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: pin %s: %w", subject, err)
	}
	p.PinnedAt = parseStamp(at)
	return &p, nil
}

// PinOnFirstUse stores p unless the subject is pinned already, and returns the pin in force.
func (s *Store) PinOnFirstUse(ctx context.Context, p Pin) (*Pin, error) {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO pins (subject, repository, repository_id, owner_id, workflow, source, pinned_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (subject) DO NOTHING`,
			p.Subject, p.Repository, p.RepositoryID, p.OwnerID, p.Workflow, p.Source, s.stamp())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: pin %s: %w", p.Subject, err)
	}
	return s.GetPin(ctx, p.Subject)
}

// DeletePin removes a subject's pin (an admin's re-pin), with its audit entry.
func (s *Store) DeletePin(ctx context.Context, subject string, audit AuditEntry) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM pins WHERE subject = ?`, subject)
		if err != nil {
			return fmt.Errorf("store: delete pin %s: %w", subject, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return s.insertAudit(ctx, tx, audit)
	})
}

// ReplacePin puts p in place of the subject's pin (or pins it), with its audit entry, in one
// transaction: the list moved a package's signer explicitly, or a pin made before workflows
// were recorded learns its workflow.
func (s *Store) ReplacePin(ctx context.Context, p Pin, audit AuditEntry) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO pins (subject, repository, repository_id, owner_id, workflow, source, pinned_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (subject) DO UPDATE SET repository = excluded.repository,
			repository_id = excluded.repository_id, owner_id = excluded.owner_id, workflow = excluded.workflow,
			source = excluded.source, pinned_at = excluded.pinned_at`,
			p.Subject, p.Repository, p.RepositoryID, p.OwnerID, p.Workflow, p.Source, s.stamp())
		if err != nil {
			return fmt.Errorf("store: replace pin %s: %w", p.Subject, err)
		}
		return s.insertAudit(ctx, tx, audit)
	})
}

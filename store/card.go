package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// Card is what lists and index documents need from one release's manifest, stored with the
// release at publish (migration 0008) so that starts and rebuilds never parse manifests.
// Plugins and canvases fill the first group; extensions the second.
type Card struct {
	Kind        string   `json:"kind"` // plugin | canvas | extension
	Name        string   `json:"name"` // display name (plugins: display_name, else the humanized id)
	Description string   `json:"description,omitempty"`
	Author      string   `json:"author,omitempty"`
	Categories  []string `json:"categories,omitempty"`
	License     string   `json:"license,omitempty"` // distribution.license for canvases, else license
	// MinKandevVersion and APIVersion are the manifest's min_kandev_version and api_version.
	MinKandevVersion string `json:"min_kandev_version,omitempty"`
	APIVersion       int    `json:"api_version,omitempty"`
	// Platforms are the "<goos>-<goarch>" keys of runtime.executables, sorted; empty when
	// the release has no executable (UI or web-app only).
	Platforms    []string         `json:"platforms,omitempty"`
	RepoURL      string           `json:"repo_url,omitempty"`
	Permissions  *CardPermissions `json:"permissions,omitempty"`
	Distribution bool             `json:"distribution,omitempty"` // a distribution block (canvas)

	// Extensions (curupira-extension.toml).
	Version         string      `json:"version,omitempty"`
	TriggerTypes    []string    `json:"trigger_types,omitempty"`
	Runtime         string      `json:"runtime,omitempty"`
	ProtocolVersion int         `json:"protocol_version,omitempty"`
	Launch          *CardLaunch `json:"launch,omitempty"`
	Repository      string      `json:"repository,omitempty"`
}

// CardPermissions are what a plugin may do through the host, as the index shows them.
type CardPermissions struct {
	Reads           []string `json:"reads,omitempty"`
	Writes          []string `json:"writes,omitempty"`
	Events          []string `json:"events,omitempty"`
	SharedState     bool     `json:"shared_state,omitempty"`
	ExternalOrigins []string `json:"external_origins,omitempty"`
}

// CardLaunch is an extension's [launch] table.
type CardLaunch struct {
	Type    string   `json:"type"`
	Package string   `json:"package,omitempty"`
	Version string   `json:"version,omitempty"`
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
}

func cardColumn(c *Card) (sql.NullString, error) {
	if c == nil {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return sql.NullString{}, fmt.Errorf("store: card: %w", err)
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

func parseCard(id int64, col sql.NullString) (*Card, error) {
	if !col.Valid {
		return nil, nil
	}
	var c Card
	if err := json.Unmarshal([]byte(col.String), &c); err != nil {
		return nil, fmt.Errorf("store: release %d card: %w", id, err)
	}
	return &c, nil
}

// withoutCard picks the releases of ReleasesWithoutCard through the partial index
// releases_without_card (migration 0021): every start asks, and the rows are almost never
// there, so the look must not read every release.
const withoutCard = "WHERE card IS NULL AND id > ? ORDER BY id LIMIT ?"

// ReleasesWithoutCard returns up to limit releases with an id above after whose card is
// NULL (published before migration 0008), lowest id first, each with its raw manifest
// loaded.
func (s *Store) ReleasesWithoutCard(ctx context.Context, after int64, limit int) ([]*Release, error) {
	rels, err := s.queryReleases(ctx, "SELECT "+rowCols+" FROM releases "+withoutCard, after, limit)
	if err != nil {
		return nil, err
	}
	if err := s.fillManifests(ctx, rels); err != nil {
		return nil, err
	}
	return rels, nil
}

// SetCards records the cards of releases, by release id, in one transaction. It changes
// nothing an index shows (the card is derived from the stored manifest), so it does not
// bump the serial.
func (s *Store) SetCards(ctx context.Context, cards map[int64]*Card) error {
	return s.logged(s.tx(ctx, func(tx *sql.Tx) error {
		for id, c := range cards {
			col, err := cardColumn(c)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "UPDATE releases SET card = ? WHERE id = ?", col, id); err != nil {
				return fmt.Errorf("store: card of release %d: %w", id, err)
			}
		}
		return nil
	}))
}

// FileIDCandidates returns the package ids that may share a package URL folder with
// fileID: fileID itself and every scoped ("@scope/name") id, whose file id the caller
// computes (ingest.FileID). Scoped ids are extensions, few beside plugins.
func (s *Store) FileIDCandidates(ctx context.Context, fileID string) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT id FROM packages WHERE id = ? OR (id >= '@' AND id < 'A') ORDER BY id", fileID) // '@' < 'A': the key range of scoped ids
	if err != nil {
		return nil, fmt.Errorf("store: file id candidates: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: file id candidates: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: file id candidates: %w", err)
	}
	return out, nil
}

// InsertReleases records many releases, whose blobs are already durable, in one
// transaction, each as InsertRelease would (its log record, a serial bump, audit(r)); an
// id@version that exists already fails the whole batch. Seeding a large catalogue (a
// migration, a benchmark) costs one commit instead of one per release.
func (s *Store) InsertReleases(ctx context.Context, rels []*Release, audit func(*Release) AuditEntry) error {
	return s.logged(s.tx(ctx, func(tx *sql.Tx) error {
		for _, r := range rels {
			if err := s.insertRelease(ctx, tx, r, audit(r)); err != nil {
				return fmt.Errorf("store: insert release %s@%s: %w", r.PackageID, r.Version, err)
			}
		}
		return nil
	}))
}

package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Outcomes of one pull sync check of a repository.
const (
	SyncPublished   = "published"    // at least one new release was accepted
	SyncUnchanged   = "unchanged"    // nothing new (304, or identical bytes already published)
	SyncFailed      = "failed"       // the release or the repository was refused; Rules say why
	SyncRateLimited = "rate_limited" // GitHub asked us to wait until RateLimitedUntil
	SyncError       = "error"        // a transient failure (network, GitHub 5xx, disk); retried next round
)

// SyncState is what pull sync last saw of one listed GitHub repository.
type SyncState struct {
	Repo             string     `json:"repo"` // owner (lower-cased) "/" name
	ReleaseETag      string     `json:"release_etag,omitempty"`
	RepoETag         string     `json:"repo_etag,omitempty"`
	Tag              string     `json:"tag,omitempty"`
	IDs              []string   `json:"ids"` // the listed ids ReleaseETag was checked for
	RepositoryID     string     `json:"repository_id,omitempty"`
	OwnerID          string     `json:"owner_id,omitempty"`
	FullName         string     `json:"full_name,omitempty"`
	Stars            *int       `json:"stars"`
	PushedAt         *time.Time `json:"pushed_at"`
	CheckedAt        time.Time  `json:"checked_at"`
	Outcome          string     `json:"outcome"`
	Error            string     `json:"error,omitempty"`
	Rules            []string   `json:"rules"`
	Published        []string   `json:"published"`
	RateLimitedUntil *time.Time `json:"rate_limited_until,omitempty"`
}

const syncColumns = `repo, release_etag, repo_etag, tag, ids, repository_id, owner_id, full_name, stars, pushed_at,
	checked_at, outcome, error, rules, published, rate_limited_until`

// syncUpdate replaces every column but the key of a sync_state row with the inserted
// one's, as INSERT OR REPLACE did, in a form both dialects accept.
var syncUpdate = func() string {
	cols := strings.Split(syncColumns, ",")
	set := make([]string, 0, len(cols)-1)
	for _, c := range cols[1:] {
		c = strings.TrimSpace(c)
		set = append(set, c+" = excluded."+c)
	}
	return strings.Join(set, ", ")
}()

// SyncState returns the state of one repository (key as in SyncState.Repo), or ErrNotFound.
func (s *Store) SyncState(ctx context.Context, repo string) (*SyncState, error) {
	row := s.r.QueryRowContext(ctx, `SELECT `+syncColumns+` FROM sync_state WHERE repo = ?`, repo)
	st, err := scanSyncState(row)
	if err != nil {
		return nil, fmt.Errorf("store: sync state %s: %w", repo, err)
	}
	return st, nil
}

// SyncStates returns the state of every repository ever checked, sorted by repo.
func (s *Store) SyncStates(ctx context.Context) ([]SyncState, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+syncColumns+` FROM sync_state ORDER BY repo`)
	if err != nil {
		return nil, fmt.Errorf("store: sync states: %w", err)
	}
	defer rows.Close()
	out := []SyncState{}
	for rows.Next() {
		st, err := scanSyncState(rows)
		if err != nil {
			return nil, fmt.Errorf("store: sync states: %w", err)
		}
		out = append(out, *st)
	}
	return out, rows.Err()
}

// PutSyncState records the result of one check, replacing the repository's previous state.
func (s *Store) PutSyncState(ctx context.Context, st SyncState) error {
	rules, err := json.Marshal(nonNilStrings(st.Rules))
	if err != nil {
		return fmt.Errorf("store: sync state %s: %w", st.Repo, err)
	}
	published, err := json.Marshal(nonNilStrings(st.Published))
	if err != nil {
		return fmt.Errorf("store: sync state %s: %w", st.Repo, err)
	}
	ids, err := json.Marshal(nonNilStrings(st.IDs))
	if err != nil {
		return fmt.Errorf("store: sync state %s: %w", st.Repo, err)
	}
	var stars sql.NullInt64
	if st.Stars != nil {
		stars = sql.NullInt64{Int64: int64(*st.Stars), Valid: true}
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO sync_state (`+syncColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (repo) DO UPDATE SET `+syncUpdate,
			st.Repo, st.ReleaseETag, st.RepoETag, st.Tag, string(ids), st.RepositoryID, st.OwnerID, st.FullName, stars,
			nullStamp(st.PushedAt), st.CheckedAt.UTC().Format(time.RFC3339), st.Outcome, st.Error,
			string(rules), string(published), nullStamp(st.RateLimitedUntil))
		if err != nil {
			return fmt.Errorf("store: sync state %s: %w", st.Repo, err)
		}
		return nil
	})
}

func scanSyncState(sc scanner) (*SyncState, error) {
	var (
		st                    SyncState
		stars                 sql.NullInt64
		pushed, limited       sql.NullString
		checked               string
		rules, published, ids string
	)
	err := sc.Scan(&st.Repo, &st.ReleaseETag, &st.RepoETag, &st.Tag, &ids, &st.RepositoryID, &st.OwnerID, &st.FullName,
		&stars, &pushed, &checked, &st.Outcome, &st.Error, &rules, &published, &limited)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if stars.Valid {
		n := int(stars.Int64)
		st.Stars = &n
	}
	st.PushedAt, st.RateLimitedUntil = stampPtr(pushed), stampPtr(limited)
	st.CheckedAt = parseStamp(checked)
	if err := json.Unmarshal([]byte(rules), &st.Rules); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(published), &st.Published); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(ids), &st.IDs); err != nil {
		return nil, err
	}
	return &st, nil
}

func nullStamp(t *time.Time) sql.NullString {
	if t == nil || t.IsZero() {
		return sql.NullString{}
	}
	return sql.NullString{String: t.UTC().Format(time.RFC3339), Valid: true}
}

func stampPtr(v sql.NullString) *time.Time {
	if !v.Valid {
		return nil
	}
	t := parseStamp(v.String)
	return &t
}

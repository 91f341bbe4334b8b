package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"modernc.org/sqlite"

	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/readme"
)

// The 0003 migration renders the READMEs of releases published before it with this
// function; new releases arrive rendered (Release.READMEHTML).
func init() {
	sqlite.MustRegisterDeterministicScalarFunction("registry_render_readme", 1, renderReadmeSQL)
}

func renderReadmeSQL(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	var src []byte
	switch v := args[0].(type) {
	case nil:
		return nil, nil
	case []byte:
		src = v
	case string:
		src = []byte(v)
	default:
		return nil, fmt.Errorf("store: render readme: unexpected %T", v)
	}
	html, _, err := readme.Render(src)
	if err != nil {
		return nil, err
	}
	return append([]byte{}, html...), nil
}

// Release is one accepted package version.
type Release struct {
	ID        int64
	PackageID string
	Version   string
	Kind      string // plugin | canvas | extension
	SHA256    string
	Size      int64
	Manifest  []byte // the raw manifest.yaml or curupira-extension.toml
	README    []byte // README.md as published; stored, but not loaded by reads (READMEHTML is)
	// READMEHTML is README rendered by readme.Render at publish (nil: no README). No read
	// of releases loads it: the page of one release asks Store.READMEHTML.
	READMEHTML []byte
	// Changelog is CHANGELOG.md as published; ChangelogHTML is it rendered and NotesHTML
	// the section whose heading names Version, rendered (SetChangelog, at publish). Reads
	// leave all three nil: Changelogs and ReleaseNotes load what a page shows.
	Changelog, ChangelogHTML, NotesHTML []byte
	// Facts are what the registry verified at publish; nil for releases published before
	// it recorded them.
	Facts *Facts
	// Card is what lists and indexes need from Manifest, computed at publish; nil only for
	// a release published before migration 0008 until the first start computes it.
	Card        *Card
	IconSHA256  string
	IconExt     string
	IconType    string
	IconSize    int64 // recorded on the icon's blob row only
	Warnings    problem.List
	Signature   json.RawMessage // the verified signature result, or nil
	PublishedBy string
	Yanked      bool
	YankReason  string
	Downloads   int64
	CreatedAt   time.Time
}

// Package is the curation state of one id, across its releases.
type Package struct {
	ID                    string
	Kind                  string
	DeprecatedReason      string
	DeprecatedReplacement string
	Stars                 *int
	PushedAt              *time.Time
	CreatedAt             time.Time
	ArchivedAt            *time.Time // nil while active; set by its owner (store/archived.go)
}

// Facts are the verification facts of one release, recorded at publish so that pages show
// what was checked rather than what is usually true.
type Facts struct {
	// Checksums is nil when the package has no checksums.txt (allowed for extensions);
	// otherwise every file it lists matched and every other file was listed.
	Checksums *ChecksumFacts `json:"checksums"`
	// READMETruncated: README.md was longer than readme.MaxMarkdown and only its start is
	// shown.
	READMETruncated bool `json:"readme_truncated,omitempty"`
}

// RuleREADMETruncated is the warning recorded on a release whose README.md was longer than
// readme.MaxMarkdown: pages show its start, with a note.
const RuleREADMETruncated = "readme.truncated"

// SetREADME records a release's README.md with its HTML, rendered by readme.Render, and
// when it was cut at readme.MaxMarkdown, or its HTML was longer than readme.MaxHTML and a
// notice is stored instead, notes so in Facts and adds a RuleREADMETruncated warning.
// Publish calls it once; pages show the stored HTML (Store.READMEHTML).
func (r *Release) SetREADME(markdown []byte) error {
	r.README, r.READMEHTML = markdown, nil
	if r.Facts == nil {
		r.Facts = &Facts{}
	}
	r.Facts.READMETruncated = false
	if markdown == nil {
		return nil
	}
	res, err := readme.RenderLimited(markdown, readme.MaxHTML)
	if err != nil {
		return fmt.Errorf("store: %s@%s README: %w", r.PackageID, r.Version, err)
	}
	r.READMEHTML, r.Facts.READMETruncated = res.HTML, res.Truncated || res.Oversize
	switch {
	case res.Oversize:
		r.READMEHTML = readme.OversizeNotice("README.md", len(markdown), readme.MaxHTML)
		r.Warnings = append(r.Warnings, oversizeWarning(RuleREADMETruncated, "README.md", len(markdown)))
	case res.Truncated:
		r.Warnings = append(r.Warnings, problem.Problem{Rule: RuleREADMETruncated, File: "README.md", Severity: problem.Warning,
			Message: fmt.Sprintf("README.md is %d bytes; pages show its first %d KiB of Markdown, cut at a line break, with a note; shorten it or move the rest into linked documents",
				len(markdown), readme.MaxMarkdown>>10)})
	}
	return nil
}

// oversizeWarning is the warning for a document whose HTML is longer than readme.MaxHTML.
func oversizeWarning(rule, file string, size int) problem.Problem {
	return problem.Problem{Rule: rule, File: file, Severity: problem.Warning,
		Message: fmt.Sprintf("%s is %d bytes of Markdown but renders to more than %d bytes (%d KiB) of HTML, the most the registry stores; pages show a notice pointing to the repository instead; remove repeated references, links or images until it renders smaller",
			file, size, readme.MaxHTML, readme.MaxHTML>>10)}
}

// ChecksumFacts describe a verified checksums.txt.
type ChecksumFacts struct {
	Files int `json:"files"` // files it lists, each verified against its sha256
}

// AuditEntry is one line of the audit log.
type AuditEntry struct {
	ID      int64          `json:"id"`
	At      time.Time      `json:"at"`
	Actor   string         `json:"actor"`
	Action  string         `json:"action"`
	Target  string         `json:"target"`
	Outcome string         `json:"outcome"` // ok | refused | error
	Detail  map[string]any `json:"detail"`
}

// rowCols are the columns scanRelease reads. None is rendered HTML: the catalog holds
// every release, and a README's HTML may be up to readme.MaxHTML; pages load the HTML of
// the one release they show (READMEHTML, ChangelogHTML).
const rowCols = `id, package_id, version, kind, sha256, size, facts, icon_sha256, icon_ext, icon_type,
	warnings, signature, published_by, yanked, yank_reason, downloads, created_at, card`

// InsertRelease records a release whose package (and icon) blobs are already durable, with
// its audit entry, and bumps the serial, all in one transaction. When id@version exists
// already it returns the existing release and ErrConflict, changing nothing.
func (s *Store) InsertRelease(ctx context.Context, rel *Release, audit AuditEntry) (*Release, error) {
	var existing *Release
	err := s.tx(ctx, func(tx *sql.Tx) error {
		old, err := getRelease(ctx, tx, rel.PackageID, rel.Version)
		if err == nil {
			existing = old
			return ErrConflict
		}
		if !errors.Is(err, ErrNotFound) {
			return err
		}
		return s.insertRelease(ctx, tx, rel, audit)
	})
	if errors.Is(err, ErrConflict) {
		return existing, ErrConflict
	}
	if err := s.logged(err); err != nil {
		return nil, fmt.Errorf("store: insert release %s@%s: %w", rel.PackageID, rel.Version, err)
	}
	return rel, nil
}

func (s *Store) insertRelease(ctx context.Context, tx *sql.Tx, rel *Release, audit AuditEntry) error {
	now := s.stamp()
	if _, err := insertBlob(ctx, tx, rel.SHA256, rel.Size, now); err != nil {
		return err
	}
	if rel.IconSHA256 != "" {
		if _, err := insertBlob(ctx, tx, rel.IconSHA256, rel.IconSize, now); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO packages (id, kind, created_at) VALUES (?, ?, ?)
		ON CONFLICT (id) DO NOTHING`, rel.PackageID, rel.Kind, now); err != nil {
		return err
	}
	warnings, err := json.Marshal(nonNil(rel.Warnings))
	if err != nil {
		return err
	}
	var sig sql.NullString
	if len(rel.Signature) > 0 {
		sig = sql.NullString{String: string(rel.Signature), Valid: true}
	}
	facts, err := factsColumn(rel.Facts)
	if err != nil {
		return err
	}
	card, err := cardColumn(rel.Card)
	if err != nil {
		return err
	}
	err = tx.QueryRowContext(ctx, `INSERT INTO releases (package_id, version, kind, sha256, size, manifest, readme,
		readme_html, facts, icon_sha256, icon_ext, icon_type, warnings, signature, published_by, created_at,
		changelog, changelog_html, notes_html, card)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		rel.PackageID, rel.Version, rel.Kind, rel.SHA256, rel.Size, rel.Manifest, rel.README, readmeHTMLColumn(rel),
		facts, toNull(rel.IconSHA256), toNull(rel.IconExt), toNull(rel.IconType), string(warnings), sig, rel.PublishedBy, now,
		rel.Changelog, changelogHTMLColumn(rel), rel.NotesHTML, card).Scan(&rel.ID)
	if err != nil {
		return err
	}
	rel.CreatedAt = parseStamp(now)
	if err := appendPublish(ctx, tx, rel); err != nil {
		return err
	}
	if err := bumpSerial(ctx, tx, s.change(ChangePublish, rel.PackageID, rel.Version)); err != nil {
		return err
	}
	return s.insertAudit(ctx, tx, audit)
}

// readmeHTMLColumn is the rendered README, NULL only without a README: a README whose
// HTML is empty (all of it sanitized away) is stored as an empty blob.
func readmeHTMLColumn(rel *Release) any {
	if rel.README == nil && rel.READMEHTML == nil {
		return nil
	}
	if rel.READMEHTML == nil {
		return []byte{}
	}
	return rel.READMEHTML
}

func factsColumn(f *Facts) (sql.NullString, error) {
	if f == nil {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(f)
	if err != nil {
		return sql.NullString{}, fmt.Errorf("store: facts: %w", err)
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// insertBlob records a blob whose file is already durable; inserted is false when the
// row was there already.
func insertBlob(ctx context.Context, tx *sql.Tx, sha string, size int64, now string) (inserted bool, err error) {
	res, err := tx.ExecContext(ctx, `INSERT INTO blobs (sha256, size, created_at) VALUES (?, ?, ?)
		ON CONFLICT (sha256) DO NOTHING`, sha, size, now)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func nonNil(l problem.List) problem.List {
	if l == nil {
		return problem.List{}
	}
	return l
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getRelease(ctx context.Context, q querier, id, version string) (*Release, error) {
	row := q.QueryRowContext(ctx, "SELECT "+rowCols+" FROM releases WHERE package_id = ? AND version = ?", id, version)
	return scanRelease(row)
}

type scanner interface{ Scan(dest ...any) error }

func scanRelease(sc scanner) (*Release, error) {
	var raw rawRelease
	if err := raw.scan(sc); err != nil {
		return nil, err
	}
	return raw.release()
}

// rawRelease is one release row as scanned, before its JSON columns are decoded.
type rawRelease struct {
	r                          Release
	iconSHA, iconExt, iconType sql.NullString
	warnings, created          string
	sig, yankReason, facts     sql.NullString
	card                       sql.NullString
	yanked                     int
}

func (w *rawRelease) scan(sc scanner) error {
	r := &w.r
	err := sc.Scan(&r.ID, &r.PackageID, &r.Version, &r.Kind, &r.SHA256, &r.Size, &w.facts,
		&w.iconSHA, &w.iconExt, &w.iconType, &w.warnings, &w.sig, &r.PublishedBy, &w.yanked, &w.yankReason, &r.Downloads, &w.created, &w.card)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("store: scan release: %w", err)
	}
	return nil
}

// release decodes the row's columns into a new Release.
func (w *rawRelease) release() (*Release, error) {
	r := w.r
	r.IconSHA256, r.IconExt, r.IconType = w.iconSHA.String, w.iconExt.String, w.iconType.String
	r.Yanked, r.YankReason = w.yanked == 1, w.yankReason.String
	r.CreatedAt = parseStamp(w.created)
	if w.sig.Valid {
		r.Signature = json.RawMessage(w.sig.String)
	}
	if err := json.Unmarshal([]byte(w.warnings), &r.Warnings); err != nil {
		return nil, fmt.Errorf("store: release %d warnings: %w", r.ID, err)
	}
	var err error
	if r.Card, err = parseCard(r.ID, w.card); err != nil {
		return nil, err
	}
	if w.facts.Valid {
		r.Facts = &Facts{}
		if err := json.Unmarshal([]byte(w.facts.String), r.Facts); err != nil {
			return nil, fmt.Errorf("store: release %d facts: %w", r.ID, err)
		}
	}
	return &r, nil
}

// Release returns one release, without its manifest (FillManifests loads it) or rendered
// README; downloads look releases up on every request and need only the row.
func (s *Store) Release(ctx context.Context, id, version string) (*Release, error) {
	return getRelease(ctx, s.r, id, version)
}

// Releases returns every release of a package, newest published first, without manifests
// or rendered READMEs.
func (s *Store) Releases(ctx context.Context, id string) ([]*Release, error) {
	return s.queryReleases(ctx, "SELECT "+rowCols+" FROM releases WHERE package_id = ? ORDER BY created_at DESC, id DESC", id)
}

// AllReleases returns every release of every package, without manifests or rendered HTML,
// oldest first. Each start and full rebuild reads them all: the rows are scanned in one
// statement while GOMAXPROCS workers decode their JSON columns (card, warnings, facts) a
// batch at a time, as much work as the reading at 50k releases.
func (s *Store) AllReleases(ctx context.Context) ([]*Release, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+rowCols+" FROM releases ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("store: releases: %w", err)
	}
	defer rows.Close()
	return decodeReleases(rows, runtime.GOMAXPROCS(0))
}

// releaseBatch is the number of rows a worker of decodeReleases decodes at a time.
const releaseBatch = 256

// decodeReleases scans rows in order on the caller's goroutine and decodes them over
// workers goroutines. A failure to read the rows is its error; else the first row's (in
// order) that does not decode.
func decodeReleases(rows *sql.Rows, workers int) ([]*Release, error) {
	type batch struct {
		raws []rawRelease
		out  []*Release
		err  error
	}
	var (
		batches []*batch
		wg      sync.WaitGroup
	)
	work := make(chan *batch, workers)
	for range workers {
		wg.Go(func() {
			for b := range work {
				b.out = make([]*Release, 0, len(b.raws))
				for i := range b.raws {
					r, err := b.raws[i].release()
					if err != nil {
						b.err = err
						break
					}
					b.out = append(b.out, r)
				}
				b.raws = nil
			}
		})
	}
	scanErr := func() error {
		cur := &batch{raws: make([]rawRelease, 0, releaseBatch)}
		for rows.Next() {
			cur.raws = append(cur.raws, rawRelease{})
			if err := cur.raws[len(cur.raws)-1].scan(rows); err != nil {
				return err
			}
			if len(cur.raws) == releaseBatch {
				batches = append(batches, cur)
				work <- cur
				cur = &batch{raws: make([]rawRelease, 0, releaseBatch)}
			}
		}
		if len(cur.raws) > 0 {
			batches = append(batches, cur)
			work <- cur
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("store: releases: %w", err)
		}
		return nil
	}()
	close(work)
	wg.Wait()
	if scanErr != nil {
		return nil, scanErr
	}
	var out []*Release
	if len(batches) > 0 {
		out = make([]*Release, 0, (len(batches)-1)*releaseBatch+len(batches[len(batches)-1].out))
	}
	for _, b := range batches {
		if b.err != nil {
			return nil, b.err
		}
		out = append(out, b.out...)
	}
	return out, nil
}

// READMEHTML returns the rendered README.md of one release (at most readme.MaxHTML bytes);
// nil when it has none.
func (s *Store) READMEHTML(ctx context.Context, releaseID int64) ([]byte, error) {
	return s.renderedHTML(ctx, "readme_html", "README", releaseID)
}

// renderedHTML reads one release's stored HTML column (a constant name, never input); nil
// when it is empty.
func (s *Store) renderedHTML(ctx context.Context, column, what string, releaseID int64) ([]byte, error) {
	var html []byte
	if err := s.r.QueryRowContext(ctx, "SELECT "+column+" FROM releases WHERE id = ?", releaseID).Scan(&html); err != nil {
		return nil, fmt.Errorf("store: %s of release %d: %w", what, releaseID, err)
	}
	if len(html) == 0 {
		return nil, nil
	}
	return html, nil
}

func (s *Store) queryReleases(ctx context.Context, query string, args ...any) ([]*Release, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: releases: %w", err)
	}
	defer rows.Close()
	var out []*Release
	for rows.Next() {
		r, err := scanRelease(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: releases: %w", err)
	}
	return out, nil
}

// FillManifests loads the raw manifest of each release that has none.
func (s *Store) FillManifests(ctx context.Context, rels []*Release) error {
	return s.fillManifests(ctx, rels)
}

func (s *Store) fillManifests(ctx context.Context, rels []*Release) error {
	for _, r := range rels {
		if r.Manifest != nil {
			continue
		}
		if err := s.r.QueryRowContext(ctx, "SELECT manifest FROM releases WHERE id = ?", r.ID).Scan(&r.Manifest); err != nil {
			return fmt.Errorf("store: manifest of release %d: %w", r.ID, err)
		}
	}
	return nil
}

// YankAll yanks every version of id that is not yanked yet, in one transaction (all of them
// or none), with one audit entry and log record per version made by audit(version); it
// returns the versions it yanked (none: an empty list).
func (s *Store) YankAll(ctx context.Context, id, reason string, audit func(version string) AuditEntry) ([]string, error) {
	var done []string
	err := s.logged(s.tx(ctx, func(tx *sql.Tx) error {
		done = nil
		rows, err := tx.QueryContext(ctx, "SELECT version FROM releases WHERE package_id = ? AND yanked = 0 ORDER BY id", id)
		if err != nil {
			return fmt.Errorf("store: yank all of %s: %w", id, err)
		}
		var versions []string
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return fmt.Errorf("store: yank all of %s: %w", id, err)
			}
			versions = append(versions, v)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("store: yank all of %s: %w", id, err)
		}
		for _, v := range versions {
			if _, err := tx.ExecContext(ctx, "UPDATE releases SET yanked = 1, yank_reason = ? WHERE package_id = ? AND version = ?",
				toNull(reason), id, v); err != nil {
				return fmt.Errorf("store: yank %s@%s: %w", id, v, err)
			}
			a := audit(v)
			if err := s.appendYank(ctx, tx, id, v, true, a); err != nil {
				return err
			}
			if err := s.insertAudit(ctx, tx, a); err != nil {
				return err
			}
			done = append(done, v)
		}
		if len(done) == 0 {
			return nil
		}
		return bumpSerial(ctx, tx, s.change(ChangeYankAll, id, ""))
	}))
	if err != nil {
		return nil, err
	}
	return done, nil
}

// SetYanked yanks or un-yanks one release and records the audit entry.
func (s *Store) SetYanked(ctx context.Context, id, version string, yanked bool, reason string, audit AuditEntry) error {
	flag := 0
	if yanked {
		flag = 1
	}
	return s.logged(s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE releases SET yanked = ?, yank_reason = ? WHERE package_id = ? AND version = ?",
			flag, toNull(reason), id, version)
		if err != nil {
			return fmt.Errorf("store: yank %s@%s: %w", id, version, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		if err := s.appendYank(ctx, tx, id, version, yanked, audit); err != nil {
			return err
		}
		if err := bumpSerial(ctx, tx, s.change(yankChange(yanked), id, version)); err != nil {
			return err
		}
		return s.insertAudit(ctx, tx, audit)
	}))
}

// Serial returns the change counter: it grows with every change to what the index shows.
func (s *Store) Serial(ctx context.Context) (int64, error) {
	var v int64
	err := s.r.QueryRowContext(ctx, "SELECT CAST(value AS BIGINT) FROM meta WHERE key = 'serial'").Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("store: serial: %w", err)
	}
	return v, nil
}

// BumpSerial records a change that touches no row (a reload of the curated list).
func (s *Store) BumpSerial(ctx context.Context) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return bumpSerial(ctx, tx, s.change(ChangeList, "", "")) })
}

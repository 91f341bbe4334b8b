package ingest

import (
	"context"
	"time"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/translog"
)

// Blobs is the content-addressed store of package, icon and preview bytes: a local folder
// (*store.Blobs) or an S3-compatible bucket (*s3blob.Store). Every blob is named by its
// sha256; the database records its size, which Open, Stat and Check verify.
type Blobs interface {
	// Put stores the bytes of the local file src (exactly size bytes hashing to sha); a blob
	// already present under sha is kept. The caller removes src if it still exists.
	Put(ctx context.Context, sha string, size int64, src string) error
	// PutBytes stores data and returns its sha256 (small blobs: preview copies).
	PutBytes(ctx context.Context, data []byte) (string, error)
	// Open opens a blob of the recorded size: store.ErrBlobMissing when it is absent,
	// store.ErrBlobCorrupt when it has another size. The caller closes it.
	Open(ctx context.Context, sha string, size int64) (store.Blob, error)
	// Stat is Open without opening (the check of every blob at start).
	Stat(ctx context.Context, sha string, size int64) error
	// Check re-reads and re-hashes the blob: store.ErrBlobCorrupt when its bytes differ.
	Check(ctx context.Context, sha string, size int64) error
	// Remove deletes a blob; an absent one is not an error.
	Remove(ctx context.Context, sha string) error
	// List returns the digest of every blob present.
	List(ctx context.Context) ([]string, error)
}

// Store is the metadata the pipeline reads and writes, grouped by concern. *store.Store
// implements it over SQLite or PostgreSQL (store.OpenURL); nothing in ingest knows which.
type Store interface {
	ReleaseStore
	PackageStore
	ModerationStore
	FeedStore
	SearchStore
	PinStore
	TokenStore
	MediaStore
	translog.Storage // the transparency log's records and checkpoints
	// Audit appends one entry to the audit log.
	Audit(ctx context.Context, e store.AuditEntry) error
	// Dir is this replica's local state folder (documents, last good copies, keys, spool).
	Dir() string
}

// ReleaseStore is the releases: immutable rows, yanked or not.
type ReleaseStore interface {
	InsertRelease(ctx context.Context, rel *store.Release, audit store.AuditEntry) (*store.Release, error)
	Release(ctx context.Context, id, version string) (*store.Release, error)
	Releases(ctx context.Context, id string) ([]*store.Release, error)
	AllReleases(ctx context.Context) ([]*store.Release, error)
	ReleasesWithoutCard(ctx context.Context, after int64, limit int) ([]*store.Release, error)
	FillManifests(ctx context.Context, rels []*store.Release) error
	ReleaseNotes(ctx context.Context, packageID string, versions []string) (map[string][]byte, error)
	SetYanked(ctx context.Context, id, version string, yanked bool, reason string, audit store.AuditEntry) error
	SetCards(ctx context.Context, cards map[int64]*store.Card) error
	FileIDCandidates(ctx context.Context, fileID string) ([]string, error)
}

// PackageStore is the per-package state and the curators' compatibility notes.
type PackageStore interface {
	Package(ctx context.Context, id string) (*store.Package, error)
	Packages(ctx context.Context) (map[string]*store.Package, error)
	Deprecate(ctx context.Context, id, reason, replacement string, audit store.AuditEntry) error
	SetArchived(ctx context.Context, id string, archived bool, audit store.AuditEntry) (bool, error)
	Curations(ctx context.Context, id string) (map[string]store.Curation, error)
	AllCurations(ctx context.Context) (map[string]map[string]store.Curation, error)
	SetCompat(ctx context.Context, c store.Curation, audit store.AuditEntry) error
	ClearCompat(ctx context.Context, id, version string, audit store.AuditEntry) (bool, error)
}

// ModerationStore is quarantines, abuse reports and the blocklist.
type ModerationStore interface {
	Quarantines(ctx context.Context) ([]store.Quarantine, error)
	SetQuarantine(ctx context.Context, q store.Quarantine, audit store.AuditEntry) error
	ReleaseQuarantine(ctx context.Context, id, version string, audit store.AuditEntry) (bool, error)
	AddReport(ctx context.Context, r *store.Report, audit store.AuditEntry) error
	Reports(ctx context.Context, q store.ReportQuery) ([]store.Report, error)
	ReportStore
	BlockStore
	Blocks(ctx context.Context) ([]store.Block, error)
	BlockedAmong(ctx context.Context, shas []string) (map[string]store.Block, error)
}

// FeedStore is the catalogue's serial and its change feed.
type FeedStore interface {
	Serial(ctx context.Context) (int64, error)
	BumpSerial(ctx context.Context) error
	FeedSerials(ctx context.Context) (serial, completeSince int64, err error)
	Changes(ctx context.Context, since int64, limit int) (*store.ChangePage, error)
}

// SearchStore is the search rows of the packages shown.
type SearchStore interface {
	ReplaceSearch(ctx context.Context, docs []store.SearchDoc) error
	UpsertSearch(ctx context.Context, docs []store.SearchDoc) error
	DeleteSearch(ctx context.Context, ids []string) error
}

// PinStore is trust on first use: the signer identity each package was first seen with.
type PinStore interface {
	GetPin(ctx context.Context, subject string) (*store.Pin, error)
	PinOnFirstUse(ctx context.Context, p store.Pin) (*store.Pin, error)
	ReplacePin(ctx context.Context, p store.Pin, audit store.AuditEntry) error
}

// MediaStore is what the blobs record: sizes and uses of every blob, the preview copies and
// the download counts (the bytes themselves are Blobs').
type MediaStore interface {
	BlobRecords(ctx context.Context) ([]store.BlobRecord, error)
	RecordedBlobs(ctx context.Context) ([]store.BlobRecord, error)
	BlobUsesOf(ctx context.Context, shas []string) (map[string][]store.BlobUse, error)
	BlobCount(ctx context.Context) (int, error)
	BlobSize(ctx context.Context, sha string) (int64, error)
	Previews(ctx context.Context) (map[string]*store.Preview, error)
	RecordPreviewFetched(ctx context.Context, url, sha, contentType string, size int64) (*store.Preview, error)
	RecordPreviewFailed(ctx context.Context, url, rule, msg string) (*store.Preview, error)
	RecordDownloads(ctx context.Context, counts map[store.DownloadDay]int64) error
}

// TokenStore is the API tokens (hashes only) an Authenticator checks and revokes.
type TokenStore interface {
	TokenByHash(ctx context.Context, hash string) (*store.Token, error)
	RevokeToken(ctx context.Context, id string, audit store.AuditEntry) error
	Audit(ctx context.Context, e store.AuditEntry) error
}

// ReportStore resolves abuse reports (ResolveReport; `registry reports resolve`).
type ReportStore interface {
	Report(ctx context.Context, id int64) (*store.Report, error)
	ResolveReport(ctx context.Context, id int64, res store.Resolution, audit store.AuditEntry) (*store.Report, error)
}

// BlockStore changes the blocklist (AddBlock, RemoveBlock; `registry blocklist`).
type BlockStore interface {
	AddBlock(ctx context.Context, b store.Block, audit store.AuditEntry) (bool, error)
	RemoveBlock(ctx context.Context, sha string, audit store.AuditEntry) error
}

// TokenMaker stores a new token's hash (CreateToken); AdminTokens also counts them
// (EnsureAdminToken).
type TokenMaker interface {
	CreateToken(ctx context.Context, t *store.Token, hash string, audit store.AuditEntry) error
}

// AdminTokens is what EnsureAdminToken needs: a count of admin tokens and a way to make one.
type AdminTokens interface {
	TokenMaker
	CountTokens(ctx context.Context, kind string) (int, error)
}

// OIDCStore is what trusted publishing keeps: spent token ids, pins, upload tokens, audit.
type OIDCStore interface {
	TokenMaker
	UseJTI(ctx context.Context, issuer, jti string, expires, now time.Time) error
	PinOnFirstUse(ctx context.Context, p store.Pin) (*store.Pin, error)
	Audit(ctx context.Context, e store.AuditEntry) error
}

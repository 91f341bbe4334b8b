// Package storetest is the conformance suite of the registry's metadata store: every
// behaviour the rest of the registry relies on (immutable releases, one winner of a race,
// yanks, tokens, pins, audit order, search ranking, the serial and its change feed, sync
// state, download counts) as one subtest, run against each implementation by Run. The
// SQLite store runs it in store/conformance_test.go; a PostgreSQL store runs the same
// suite on one server started by StartPostgres, a fresh database per subtest:
//
//	server := storetest.StartPostgres(t)
//	storetest.Run(t, func(t *testing.T) storetest.Backend {
//		return openPostgresStore(t, storetest.CreateDatabase(t, server))
//	})
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/pluginyard/registry/store"
)

// Releases records and reads releases and their yanks.
type Releases interface {
	InsertRelease(ctx context.Context, rel *store.Release, audit store.AuditEntry) (*store.Release, error)
	Release(ctx context.Context, id, version string) (*store.Release, error)
	Releases(ctx context.Context, id string) ([]*store.Release, error)
	FillManifests(ctx context.Context, rels []*store.Release) error
	READMEHTML(ctx context.Context, releaseID int64) ([]byte, error)
	SetYanked(ctx context.Context, id, version string, yanked bool, reason string, audit store.AuditEntry) error
	YankAll(ctx context.Context, id, reason string, audit func(version string) store.AuditEntry) ([]string, error)
	Deprecate(ctx context.Context, id, reason, replacement string, audit store.AuditEntry) error
	SetRepoStats(ctx context.Context, id string, stars *int, pushedAt *time.Time) error
}

// Tokens keeps API tokens by the sha256 of their secret, and the OIDC token ids used.
type Tokens interface {
	CreateToken(ctx context.Context, t *store.Token, hash string, audit store.AuditEntry) error
	TokenByHash(ctx context.Context, hash string) (*store.Token, error)
	Tokens(ctx context.Context) ([]*store.Token, error)
	CountTokens(ctx context.Context, kind string) (int, error)
	RevokeToken(ctx context.Context, id string, audit store.AuditEntry) error
	UseJTI(ctx context.Context, issuer, jti string, expires, now time.Time) error
}

// Pins keeps the trust-on-first-use pins.
type Pins interface {
	GetPin(ctx context.Context, subject string) (*store.Pin, error)
	PinOnFirstUse(ctx context.Context, p store.Pin) (*store.Pin, error)
	DeletePin(ctx context.Context, subject string, audit store.AuditEntry) error
}

// Audit appends to and reads the audit log.
type Audit interface {
	Audit(ctx context.Context, e store.AuditEntry) error
	AuditLog(ctx context.Context, limit int, before int64) ([]store.AuditEntry, error)
}

// Search indexes and searches the latest listed release of each package.
type Search interface {
	ReplaceSearch(ctx context.Context, docs []store.SearchDoc) error
	UpsertSearch(ctx context.Context, docs []store.SearchDoc) error
	DeleteSearch(ctx context.Context, ids []string) error
	Search(ctx context.Context, q store.SearchQuery) ([]string, int, error)
}

// Serial is the change counter and its feed.
type Serial interface {
	Serial(ctx context.Context) (int64, error)
	BumpSerial(ctx context.Context) error
	Changes(ctx context.Context, since int64, limit int) (*store.ChangePage, error)
}

// Sync keeps what pull sync last saw of each repository.
type Sync interface {
	SyncState(ctx context.Context, repo string) (*store.SyncState, error)
	SyncStates(ctx context.Context) ([]store.SyncState, error)
	PutSyncState(ctx context.Context, st store.SyncState) error
}

// Downloads counts downloads per release and per package and day.
type Downloads interface {
	RecordDownloads(ctx context.Context, counts map[store.DownloadDay]int64) error
	DailyDownloads(ctx context.Context, packageID, from string) ([]store.DayCount, error)
}

// Blobs is what the metadata store records of blobs: sizes and every use.
type Blobs interface {
	BlobRecords(ctx context.Context) ([]store.BlobRecord, error)
	RecordedBlobs(ctx context.Context) ([]store.BlobRecord, error)
	BlobUsesOf(ctx context.Context, shas []string) (map[string][]store.BlobUse, error)
	RecordPreviewFetched(ctx context.Context, url, sha, contentType string, size int64) (*store.Preview, error)
}

// Backend is the metadata store the suite exercises: the subset of *store.Store's methods
// a second implementation must provide, with the same errors (store.ErrNotFound,
// store.ErrConflict) and the same behaviour.
type Backend interface {
	Releases
	Tokens
	Pins
	Audit
	Search
	Serial
	Sync
	Downloads
	Blobs
}

// suite is every behaviour, one subtest each, in the order Run runs them.
var suite = []struct {
	name string
	test func(t *testing.T, b Backend)
}{
	{"ReleaseRoundTrip", testReleaseRoundTrip},
	{"ReleaseImmutable", testReleaseImmutable},
	{"ReleaseIdenticalBytesIdempotent", testReleaseIdempotent},
	{"ReleaseOneWinner", testReleaseOneWinner},
	{"Yank", testYank},
	{"YankAll", testYankAll},
	{"Tokens", testTokens},
	{"TokenExpiry", testTokenExpiry},
	{"OIDCReplay", testOIDCReplay},
	{"Pins", testPins},
	{"PinOneWinner", testPinOneWinner},
	{"AuditOrder", testAuditOrder},
	{"AuditOutcome", testAuditOutcome},
	{"SearchExactFirst", testSearchExactFirst},
	{"SearchFilters", testSearchFilters},
	{"SearchUpsertDelete", testSearchUpsertDelete},
	{"SerialEveryChange", testSerialEveryChange},
	{"SerialConcurrentBumps", testSerialConcurrentBumps},
	{"ChangesPaging", testChangesPaging},
	{"SyncState", testSyncState},
	{"Downloads", testDownloads},
	{"DownloadsConcurrent", testDownloadsConcurrent},
	{"BlobUses", testBlobUses},
}

// Run runs every behaviour of the suite as a subtest of t, each on a fresh, empty backend
// from open (which registers its own cleanup on the subtest's t).
func Run(t *testing.T, open func(t *testing.T) Backend) {
	for _, tc := range suite {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, open(t)) })
	}
}

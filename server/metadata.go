package server

import (
	"context"

	"github.com/pluginyard/registry/store"
)

// Metadata is every read the handlers make of the metadata store, beside what the ingest
// service answers from memory (catalog, documents, previews). The embedded default is
// *store.Store (SQLite); a second backend implements these methods and nothing in the
// handlers changes. The values returned are plain data (store.Release, …); a missing row
// is store.ErrNotFound. Writes go through *ingest.Service, never through here.
type Metadata interface {
	// Ping checks that the database answers (GET /readyz).
	Ping(ctx context.Context) error

	// Release is id@version, yanked or not, without its manifest or rendered HTML;
	// Releases are every version of id the same way, newest published first.
	Release(ctx context.Context, id, version string) (*store.Release, error)
	Releases(ctx context.Context, id string) ([]*store.Release, error)
	// BlobSize is the size recorded for blob sha, what the blob file is checked against.
	BlobSize(ctx context.Context, sha string) (int64, error)
	// Curations are an admin's compatibility narrowings of id's releases, by version.
	Curations(ctx context.Context, id string) (map[string]store.Curation, error)
	// LogIndexes are the transparency log records of id's releases, by version.
	LogIndexes(ctx context.Context, id string) (map[string]int64, error)

	// Search answers q: ids in rank order (an id or name equal to the text first) and a
	// total that stops past store.SearchCap; SearchCounted adds the category counts.
	Search(ctx context.Context, q store.SearchQuery) ([]string, int, error)
	SearchCounted(ctx context.Context, q store.SearchQuery) (store.SearchResult, error)

	// The HTML rendered at publish (nil when none), loaded only for the page showing it.
	READMEHTML(ctx context.Context, releaseID int64) ([]byte, error)
	ChangelogHTML(ctx context.Context, releaseID int64) ([]byte, error)
	ReleaseNotes(ctx context.Context, packageID string, versions []string) (map[string][]byte, error)
	// DailyDownloads are packageID's downloads per UTC day from `from` (YYYY-MM-DD) on,
	// oldest first; days without downloads are absent.
	DailyDownloads(ctx context.Context, packageID, from string) ([]store.DayCount, error)

	// AuditLog is at most limit audit entries with ids below before (0: from the
	// newest), newest first.
	AuditLog(ctx context.Context, limit int, before int64) ([]store.AuditEntry, error)
	// SyncStatus is pull sync's state as recorded, when this process does not poll.
	SyncStatus
	// WebhookLog is the webhook delivery log (GET /api/v1/admin/webhooks/deliveries).
	WebhookLog
}

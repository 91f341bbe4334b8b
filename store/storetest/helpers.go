package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"

	"github.com/pluginyard/registry/store"
)

// okAudit is the audit entry of a write whose entry the test does not look at.
var okAudit = store.AuditEntry{Actor: "storetest", Action: "test", Outcome: "ok"}

// sha is the hex sha256 of data, as the blob store names it.
func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// newRelease is a release of id@version whose package bytes are data. The metadata store
// records the blob's digest and size only: the blob store (another interface) keeps the
// bytes.
func newRelease(id, version string, data []byte) *store.Release {
	return &store.Release{PackageID: id, Version: version, Kind: "plugin", SHA256: sha(data), Size: int64(len(data)),
		Manifest: []byte("id: " + id + "\nversion: " + version + "\n"), PublishedBy: "storetest"}
}

// publishAudit is the audit entry ingest writes with a publish.
func publishAudit(id, version string) store.AuditEntry {
	return store.AuditEntry{Actor: "storetest", Action: "publish", Target: id + "@" + version, Outcome: "ok"}
}

// mustPublish inserts a release of id@version with bytes data and returns it as stored.
func mustPublish(tb testing.TB, b Backend, id, version string, data []byte) *store.Release {
	tb.Helper()
	rel, err := b.InsertRelease(context.Background(), newRelease(id, version, data), publishAudit(id, version))
	if err != nil {
		tb.Fatalf("InsertRelease(%s@%s): %v", id, version, err)
	}
	return rel
}

func mustSerial(tb testing.TB, b Backend) int64 {
	tb.Helper()
	n, err := b.Serial(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// allChanges is the whole change feed.
func allChanges(tb testing.TB, b Backend) *store.ChangePage {
	tb.Helper()
	page, err := b.Changes(context.Background(), 0, 100000)
	if err != nil {
		tb.Fatal(err)
	}
	if page.More {
		tb.Fatalf("the feed has more than 100000 changes")
	}
	return page
}

// auditLog is the whole audit log, newest first.
func auditLog(tb testing.TB, b Backend) []store.AuditEntry {
	tb.Helper()
	log, err := b.AuditLog(context.Background(), 100000, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return log
}

// race runs fn(i) for i in [0, n) on n goroutines released together, and returns their
// errors by i.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// hash64 is a 64-hex-digit token hash made from a name, so tests read as names.
func hash64(name string) string { return sha([]byte("token " + name)) }

// versionN is the n-th distinct SemVer version.
func versionN(n int) string { return fmt.Sprintf("1.0.%d", n) }

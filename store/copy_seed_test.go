package store_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
)

// copyEnd is one opened side of a copy test: its URL, its store and its blobs.
type copyEnd struct {
	url   string // sqlite:FILE or postgres://…
	dir   string // the local data directory
	st    *store.Store
	blobs store.CopyBlobs
}

func (e copyEnd) end() store.CopyEnd {
	return store.CopyEnd{Database: e.url, DataDir: e.dir, Blobs: e.blobs}
}

// openSQLiteEnd opens a fresh SQLite store and blob folder in a temp dir.
func openSQLiteEnd(tb testing.TB) copyEnd {
	tb.Helper()
	dir := tb.TempDir()
	e := copyEnd{url: "sqlite:" + filepath.Join(dir, store.DBFile), dir: dir}
	return openEnd(tb, e)
}

// openPostgresEnd opens a store on a fresh database of the shared PostgreSQL server.
func openPostgresEnd(tb testing.TB) copyEnd {
	tb.Helper()
	e := copyEnd{url: storetest.CreateDatabase(tb, storetest.SharedPostgres(tb)), dir: tb.TempDir()}
	return openEnd(tb, e)
}

func openEnd(tb testing.TB, e copyEnd) copyEnd {
	tb.Helper()
	st, err := store.OpenURL(context.Background(), e.url, e.dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	e.st = st
	if e.blobs == nil {
		e.blobs = st.Blobs.Folder()
	}
	return e
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

var seedAudit = store.AuditEntry{Actor: "seed", Action: "test", Outcome: "ok"}

// seedCatalogue fills every table of the schema: releases releases of releases/5 packages
// (blobs of blobSize bytes), their audit, log, changes and webhook events, and a row of
// every other kind. A migration adding a table makes TestCopyEveryTable fail until a row
// of it is seeded here.
func seedCatalogue(tb testing.TB, e copyEnd, releases, blobSize int) {
	tb.Helper()
	ctx := context.Background()
	st := e.st
	must := func(what string, err error) {
		tb.Helper()
		if err != nil {
			tb.Fatalf("seed %s: %v", what, err)
		}
	}
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	must("endpoints", st.SetWebhookEndpoints(ctx, []string{"ops"}))
	rng := rand.New(rand.NewPCG(uint64(releases), uint64(blobSize)))
	var first *store.Release
	for i := range releases {
		id := fmt.Sprintf("acme-plugin-%03d", i/5)
		version := fmt.Sprintf("1.%d.0", i%5)
		data := make([]byte, blobSize)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		sha, err := e.blobs.(interface {
			PutBytes(context.Context, []byte) (string, error)
		}).PutBytes(ctx, data)
		must("blob", err)
		rel := &store.Release{PackageID: id, Version: version, Kind: "plugin", SHA256: sha, Size: int64(len(data)),
			Manifest: []byte("id: " + id + "\nversion: " + version + "\n"), README: []byte("# " + id + "\n\nIt does things.\n"),
			READMEHTML: []byte("<h1>" + id + "</h1>"), PublishedBy: "acme"}
		got, err := st.InsertRelease(ctx, rel, store.AuditEntry{Actor: "acme", Action: "publish", Target: id + "@" + version, Outcome: "ok"})
		must("release", err)
		if first == nil {
			first = got
		}
	}
	pkg, ver := first.PackageID, first.Version
	must("refused publish", st.Audit(ctx, store.AuditEntry{Actor: "acme", Action: "publish", Target: pkg + "@9.9.9", Outcome: "refused",
		Detail: map[string]any{"rules": []string{"manifest.id"}}}))
	must("yank", st.SetYanked(ctx, pkg, ver, true, "broken build", seedAudit))
	must("deprecate", st.Deprecate(ctx, pkg, "superseded", "acme-plugin-001", seedAudit))
	must("compat", st.SetCompat(ctx, store.Curation{PackageID: pkg, Version: ver, MaxKandev: "2.0.0", Reason: "breaks on 2.1", SetBy: "admin", SetAt: now}, seedAudit))
	must("quarantine", st.SetQuarantine(ctx, store.Quarantine{PackageID: pkg, Reason: "under review", SetBy: "admin", SetAt: now}, seedAudit))
	must("report", st.AddReport(ctx, &store.Report{PackageID: pkg, Kind: "broken", Reason: "crashes at start", ReporterHash: hexSum([]byte("reporter")), CreatedAt: now}, seedAudit))
	_, err := st.AddBlock(ctx, store.Block{SHA256: hexSum([]byte("malware")), Reason: "known malware", AddedBy: "admin", AddedAt: now}, seedAudit)
	must("block", err)
	must("token", st.CreateToken(ctx, &store.Token{ID: "tok_seed", Kind: "publisher", Publisher: "acme", Scope: []string{}, CreatedAt: now}, hexSum([]byte("token")), seedAudit))
	_, err = st.PinOnFirstUse(ctx, store.Pin{Subject: "github:acme/hello", Repository: "acme/hello", RepositoryID: "101", OwnerID: "202", Source: "oidc", PinnedAt: now})
	must("pin", err)
	must("sync state", st.PutSyncState(ctx, store.SyncState{Repo: "acme/hello", IDs: []string{pkg}, CheckedAt: now, Outcome: "failed", Error: "manifest.id"}))
	must("jti", st.UseJTI(ctx, "https://token.actions.githubusercontent.com", "jti-seed", now.Add(time.Hour), now))
	must("downloads", st.RecordDownloads(ctx, map[store.DownloadDay]int64{{ReleaseID: first.ID, Day: "2026-12-01"}: 3}))
	png := []byte("\x89PNG\r\n\x1a\n preview")
	psha, err := e.blobs.(interface {
		PutBytes(context.Context, []byte) (string, error)
	}).PutBytes(ctx, png)
	must("preview blob", err)
	_, err = st.RecordPreviewFetched(ctx, "https://example.com/shot.png", psha, "image/png", int64(len(png)))
	must("preview", err)
	_, err = st.RecordPreviewFailed(ctx, "https://example.com/gone.png", "preview.fetch", "404 Not Found")
	must("preview failure", err)
	size, err := st.LogSize(ctx)
	must("log size", err)
	must("checkpoint", st.SaveCheckpoint(ctx, size, []byte("registry.example\n"+fmt.Sprint(size)+"\n")))
	_, err = st.SealWebhookEvents(ctx, now, 1000, func(ev store.WebhookEvent) (store.WebhookSeal, error) {
		return store.WebhookSeal{MsgID: fmt.Sprintf("msg_%d", ev.ID), Body: []byte(`{"type":"` + ev.Type + `"}`), Endpoints: []string{"ops"}}, nil
	})
	must("seal", err)
	serial, err := st.Serial(ctx)
	must("serial", err)
	_, err = st.PutDocuments(ctx, []store.StoredDocument{{Serial: serial, Name: store.DocumentKandev, ETag: `"seed"`, GeneratedAt: now,
		Meta: []byte("{}"), Body: []byte(`{"plugins":[]}`), BuiltBy: "seed"}})
	must("documents", err)
}

// rawDB opens a plain pool on an end's database, for a test to look at every table.
func rawDB(tb testing.TB, url string) *sql.DB {
	tb.Helper()
	driver, dsn := "pgx", url
	if file, ok := strings.CutPrefix(url, "sqlite:"); ok {
		driver, dsn = "sqlite", store.SQLiteURI(file)+"?_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// tablesOf lists the base tables of db, as its own catalogue has them.
func tablesOf(tb testing.TB, db *sql.DB, postgres bool) []string {
	tb.Helper()
	q := `SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`
	if postgres {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`
	}
	rows, err := db.Query(q)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			tb.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// dumpTable is every row of table, each as text, sorted (the two dialects order text keys
// by different collations).
func dumpTable(tb testing.TB, db *sql.DB, table string) []string {
	tb.Helper()
	rows, err := db.Query(`SELECT * FROM "` + table + `"`)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			tb.Fatal(err)
		}
		parts := make([]string, len(cols))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			parts[i] = fmt.Sprintf("%s=%v", cols[i], v)
		}
		sort.Strings(parts) // the dialects may order a table's columns differently
		out = append(out, strings.Join(parts, " "))
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	sort.Strings(out)
	return out
}

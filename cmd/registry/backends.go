package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/s3blob"
	"github.com/pluginyard/registry/store"
)

// Where the metadata and the blobs live, as --database and --blobs name them. The
// embedded default is both under --data: sqlite:DATA/registry.db and file:DATA/blobs.
const (
	databaseUsage = "metadata store `URL`: sqlite:PATH (default sqlite:DATA/registry.db) or postgres://USER@HOST:PORT/DB (password in the URL or PGPASSWORD)"
	blobsUsage    = "blob store `URL`: file:PATH (default file:DATA/blobs) or s3://BUCKET?endpoint=HOST:PORT&region=R&prefix=P&insecure=1 (credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"
	redirectUsage = "answer package downloads with a 302 to a pre-signed URL of the S3 blob, valid 5 minutes, instead of streaming them (needs --blobs s3://…; still counted)"
)

// blobStore is what a command does with the blobs: ingest's contract, plus the
// listing with ages that fsck and the start-up sweep read (store.BlobChecker,
// store.BlobSweeper). The folder and the bucket both are one.
type blobStore interface {
	ingest.Blobs
	Info(ctx context.Context, sha string) (store.BlobInfo, error)
}

// SweepMinAge is how old an unrecorded blob must be before serve's start-up sweep removes
// it from a store other replicas may share: older than any publish still in flight.
const SweepMinAge = time.Hour

// backends are the --database and --blobs values of a command; "" means the default
// under the data directory.
type backends struct {
	database, blobs string
}

// backendFlags declares --database (REGISTRY_DATABASE) and --blobs (REGISTRY_BLOBS) on fs.
func backendFlags(c *cli, fs *flag.FlagSet) *backends {
	b := &backends{}
	fs.StringVar(&b.database, "database", envDefault(c, "REGISTRY_DATABASE", ""), databaseUsage+" (REGISTRY_DATABASE)")
	fs.StringVar(&b.blobs, "blobs", envDefault(c, "REGISTRY_BLOBS", ""), blobsUsage+" (REGISTRY_BLOBS)")
	return b
}

// databaseURL is --database with its default filled in.
func (b backends) databaseURL(dataDir string) string {
	if b.database == "" {
		return "sqlite:" + filepath.Join(dataDir, store.DBFile)
	}
	return b.database
}

// sqlitePath is the database file of a sqlite: URL, "" for another kind.
func (b backends) sqlitePath(dataDir string) string {
	p, ok := strings.CutPrefix(b.databaseURL(dataDir), "sqlite:")
	if !ok {
		return ""
	}
	return p
}

// s3 reports whether --blobs names a bucket.
func (b backends) s3() bool { return strings.HasPrefix(b.blobs, "s3://") }

// check refuses a malformed --database or --blobs before anything is opened, naming the
// flag, the value and the fix; redirect is serve's --blobs-redirect.
func (b backends) check(redirect bool) error {
	var errs []error
	d := b.database
	if d != "" && !strings.HasPrefix(d, "sqlite:") && !strings.HasPrefix(d, "postgres://") && !strings.HasPrefix(d, "postgresql://") {
		errs = append(errs, fmt.Errorf("--database %q: want sqlite:PATH (a database file, default sqlite:DATA/registry.db) or postgres://USER@HOST:PORT/DATABASE", redact(d)))
	} else if d == "sqlite:" {
		errs = append(errs, fmt.Errorf("--database %q names no file: write sqlite:PATH, or leave it out for sqlite:DATA/registry.db", d))
	}
	switch {
	case b.blobs == "" || strings.HasPrefix(b.blobs, "file:"):
		if b.blobs == "file:" {
			errs = append(errs, errors.New(`--blobs "file:" names no folder: write file:PATH, or leave it out for file:DATA/blobs`))
		}
		if redirect {
			errs = append(errs, errors.New("--blobs-redirect needs an S3 blob store (--blobs s3://BUCKET?endpoint=…): a folder's downloads are streamed; remove --blobs-redirect or set --blobs"))
		}
	case b.s3():
		if _, err := s3blob.ParseURL(b.blobs); err != nil {
			errs = append(errs, fmt.Errorf("--blobs: %w", err))
		}
	default:
		errs = append(errs, fmt.Errorf("--blobs %q: want file:PATH (a folder, default file:DATA/blobs) or s3://BUCKET?endpoint=HOST:PORT&region=REGION", redact(b.blobs)))
	}
	return errors.Join(errs...)
}

// open opens the metadata store and the blob store the flags name, with dataDir as this
// process's local state. The blob store is the store's own folder when --blobs is the
// default; it is closed with the store.
func (b backends) open(ctx context.Context, dataDir string) (*store.Store, blobStore, error) {
	st, err := b.openMetadata(ctx, dataDir)
	if err != nil {
		return nil, nil, err
	}
	blobs, err := b.openBlobs(ctx, st, dataDir)
	if err != nil {
		_ = st.Close()
		return nil, nil, err
	}
	return st, blobs, nil
}

// openMetadata opens only the metadata store the flags name (both are still checked), for
// a command that never reads a blob: a bucket is not probed for it.
func (b backends) openMetadata(ctx context.Context, dataDir string) (*store.Store, error) {
	if err := b.check(false); err != nil {
		return nil, err
	}
	st, err := store.OpenURL(ctx, b.databaseURL(dataDir), dataDir)
	if err != nil {
		return nil, fmt.Errorf("--database: %w", err)
	}
	return st, nil
}

func (b backends) openBlobs(ctx context.Context, st *store.Store, dataDir string) (blobStore, error) {
	if b.s3() {
		s, err := s3blob.Open(ctx, b.blobs)
		if err != nil {
			return nil, fmt.Errorf("--blobs: %w", err)
		}
		return s, nil
	}
	if b.defaultBlobs(dataDir) {
		return st.Blobs.Folder(), nil
	}
	f, err := store.OpenFolder(strings.TrimPrefix(b.blobs, "file:"))
	if err != nil {
		return nil, fmt.Errorf("--blobs %s: %w", b.blobs, err)
	}
	return f, nil
}

// blobFolder is the folder of the blobs the flags name: DATA/blobs by default, or the PATH
// of a file: --blobs; ok is false for a bucket.
func (b backends) blobFolder(dataDir string) (dir string, ok bool) {
	if b.defaultBlobs(dataDir) {
		return filepath.Join(dataDir, "blobs"), true
	}
	return strings.CutPrefix(b.blobs, "file:")
}

// embedded reports whether the flags name the embedded default: the SQLite file and the
// blob folder of dataDir, which one process holds (serve's lock).
func (b backends) embedded(dataDir string) bool {
	return b.sqlitePath(dataDir) != "" && b.defaultBlobs(dataDir)
}

// defaultBlobs reports whether --blobs names the blob folder of dataDir, the store's own
// (by default, or written out); check has refused any other kind but file: and s3://.
func (b backends) defaultBlobs(dataDir string) bool {
	dir, ok := strings.CutPrefix(b.blobs, "file:")
	return b.blobs == "" || ok && filepath.Clean(dir) == filepath.Join(dataDir, "blobs")
}

// sweep removes the blobs no release records, left by a publish a crash interrupted: all
// of them in the embedded default, which no other process writes; only those older than
// SweepMinAge in a store replicas may share. It returns how many it removed.
func (b backends) sweep(ctx context.Context, st *store.Store, blobs blobStore, dataDir string) (int, error) {
	if b.embedded(dataDir) {
		return st.CollectGarbage(ctx)
	}
	return st.CollectGarbageIn(ctx, blobs, SweepMinAge)
}

// blobsWithoutDatabase refuses a start that would create the SQLite database beside a
// blob folder that already holds blobs: the database was lost, moved or renamed, and the
// start-up sweep removes every blob the database does not record, which in a new database
// is every one. A bucket is not listed here; its sweep keeps blobs younger than
// SweepMinAge, and an operator pointing a new database at an old bucket is told by fsck.
func (b backends) blobsWithoutDatabase(dataDir string) error {
	p := b.sqlitePath(dataDir)
	dir, folder := b.blobFolder(dataDir)
	if p == "" || !folder {
		return nil
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		return nil // there (or unreadable: opening it says why)
	}
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	blobs, err := store.OpenBlobs(dir)
	if err != nil {
		return err
	}
	shas, err := blobs.List()
	if err != nil || len(shas) == 0 {
		return err
	}
	return fmt.Errorf("no registry database at %s, but %s holds %d blobs: a new database would record none of them, and the start would remove them all. "+
		"Restore the database (`registry restore --data %s SNAPSHOT`) or point --database at it; for a new registry, use a new data directory", p, dir, len(shas), dataDir)
}

// missingDatabase says, for a command that needs an existing registry, that the SQLite
// file --database names is absent ("" when it is there, or the database is PostgreSQL).
func (b backends) missingDatabase(dataDir string) string {
	p := b.sqlitePath(dataDir)
	if p == "" {
		return ""
	}
	if _, err := os.Stat(p); err != nil {
		if b.database == "" {
			return fmt.Sprintf("no registry database in %s (set --data or REGISTRY_DATA to the directory `registry serve` uses, or --database)", dataDir)
		}
		return fmt.Sprintf("--database %s: no registry database at %s (name the file `registry serve` uses)", b.database, p)
	}
	return ""
}

// redact hides a password in a URL shown in an error.
func redact(raw string) string {
	if i := strings.Index(raw, "://"); i >= 0 {
		if at := strings.Index(raw[i+3:], "@"); at >= 0 {
			if colon := strings.Index(raw[i+3:i+3+at], ":"); colon >= 0 {
				return raw[:i+3+colon+1] + "REDACTED" + raw[i+3+at:]
			}
		}
	}
	return raw
}

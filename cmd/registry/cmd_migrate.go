package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pluginyard/registry/s3blob"
	"github.com/pluginyard/registry/store"
)

var migrateHelp = help{
	Summary: "copy a registry to other backends (SQLite ⇄ PostgreSQL, folder ⇄ S3), verified and resumable",
	Usage:   "registry migrate --from URL --to URL [--from-blobs URL] [--blobs URL] [--data DIR] [--batch N]",
	About: `Copies every table of the schema (releases, packages, tokens, pins, audit, sync state, the
transparency log, changes, quarantines, reports, blocklist, webhooks…; the search tables and
the stored index documents are not copied, the first registry serve on the destination
rebuilds them) and every blob the database records, then verifies the copy: the row count
and a digest of the rows of every table, and the sha256 of every blob re-read from the
destination. Progress goes to stderr, the summary to stdout.

--from and --to are sqlite:DIR (a data directory: DIR/registry.db, blobs in DIR/blobs),
sqlite:FILE.db, or postgres://USER@HOST:PORT/DB. --from-blobs and --blobs default to
file:DIR/blobs beside a SQLite database and are required beside PostgreSQL (s3://BUCKET?
endpoint=…, credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY).

Stop the registry first: the source must not change during the copy, and nothing may
serve from the destination before it is verified. migrate takes the folder of each SQLite
end and the destination's --data as registry serve does, so it refuses while a registry
(or a restore, or an offline command) holds one. An interrupted copy (Ctrl-C, a crash)
resumes where it stopped when run again with the same flags: each table's rows go in
primary-key order, in batches committed with a checkpoint, and blobs already present with
the right size are skipped. A destination that holds other data under a key the source
has is refused (rule migrate.conflict), naming the table and the key.

Exit status: 0 when copied and verified, 1 when refused (also a directory in use),
interrupted or failed verification (rule migrate.verify), 2 on usage errors.`,
	Example: "registry migrate --from sqlite:/var/lib/registry --to postgres://registry@db:5432/registry \\\n  --blobs 's3://registry-blobs?endpoint=s3.example.com&region=eu-west-1'\n" +
		"registry migrate --from postgres://registry@db:5432/registry --from-blobs 's3://registry-blobs?endpoint=s3.example.com&region=eu-west-1' \\\n  --to sqlite:/var/lib/registry-copy",
}

// migrateOptions are migrate's flags.
type migrateOptions struct {
	from, to, fromBlobs, blobs, data string
	batch                            int
}

func migrateFlags(c *cli) (*flag.FlagSet, *migrateOptions) {
	fs := c.flags("migrate")
	o := &migrateOptions{}
	fs.StringVar(&o.from, "from", "", "source database `URL`: sqlite:DIR, sqlite:FILE.db or postgres://…; required")
	fs.StringVar(&o.to, "to", "", "destination database `URL`: sqlite:DIR, sqlite:FILE.db or postgres://…; required")
	fs.StringVar(&o.fromBlobs, "from-blobs", "", "source blob store `URL`: file:PATH or s3://…; default file:DIR/blobs beside a SQLite --from")
	fs.StringVar(&o.blobs, "blobs", "", "destination blob store `URL`: file:PATH or s3://…; default file:DIR/blobs beside a SQLite --to")
	fs.StringVar(&o.data, "data", "", "local state `DIR` of the destination (and the blob spool); default the --to directory, or a temporary one beside PostgreSQL")
	fs.IntVar(&o.batch, "batch", 500, "rows per committed batch (`N`)")
	return fs, o
}

// cmdMigrate is `registry migrate --from URL --to URL`.
func cmdMigrate(ctx context.Context, c *cli, args []string) int {
	fs, o := migrateFlags(c)
	pos, err := parse(fs, args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) > 0 {
		return c.usageError("migrate", "expected no argument, found %q (the databases are given with --from and --to)", strings.Join(pos, " "))
	}
	from, to, cleanup, err := o.ends(ctx)
	if err != nil {
		return c.usageError("migrate", "%v", err)
	}
	defer cleanup()
	lock, err := lockDirs("migrating from or into it", o.lockTargets(to.DataDir)...)
	if err != nil {
		fmt.Fprintf(c.stderr, "migrate: %v\n", err)
		return exitInvalid
	}
	// Deferred after cleanup, so given up before a temporary directory is removed.
	defer lock.Close()
	spool := filepath.Join(to.DataDir, "spool") // beside the destination's blob folder: Put renames
	if err := os.MkdirAll(spool, 0o750); err != nil {
		return c.usageError("migrate", "--data %s: %v", to.DataDir, err)
	}
	// A killed migrate leaves the blob it was spooling; with the lock held none is in use.
	if stale, err := filepath.Glob(filepath.Join(spool, store.SpoolPattern)); err == nil {
		for _, f := range stale {
			_ = os.Remove(f)
		}
	}
	p := newMigrateProgress(c.stderr)
	rep, err := store.Copy(ctx, from, to, store.CopyOptions{BatchRows: o.batch, SpoolDir: spool, Progress: p.report})
	p.flush()
	if err != nil {
		return migrateFailed(c, err)
	}
	printMigrateReport(c.stdout, from, to, rep)
	return exitOK
}

func migrateFailed(c *cli, err error) int {
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(c.stderr, "migrate: interrupted; run the same command again to resume from the checkpoints it committed")
		return exitInvalid
	}
	fmt.Fprintf(c.stderr, "migrate: %v\n", err)
	return exitInvalid
}

// ends checks the flags and opens both blob stores; cleanup removes the temporary local
// state directories a PostgreSQL side is given.
func (o *migrateOptions) ends(ctx context.Context) (from, to store.CopyEnd, cleanup func(), err error) {
	var temps []string
	cleanup = func() {
		for _, d := range temps {
			_ = os.RemoveAll(d)
		}
	}
	if o.from == "" || o.to == "" {
		return from, to, cleanup, errors.New("--from URL and --to URL are required")
	}
	if o.batch < 1 {
		return from, to, cleanup, fmt.Errorf("--batch %d: want at least 1 row", o.batch)
	}
	// localDir is the data directory beside a SQLite database, else a temporary one.
	localDir := func(database string) (string, error) {
		if file, ok := store.CopyDatabaseFile(database); ok {
			return filepath.Dir(file), nil
		}
		d, err := os.MkdirTemp("", "registry-migrate-")
		temps = append(temps, d)
		return d, err
	}
	if file, ok := store.CopyDatabaseFile(o.from); ok {
		if _, err := os.Stat(file); err != nil {
			return from, to, cleanup, fmt.Errorf("--from %s: no registry database at %s (name the data directory or file `registry serve` uses)", o.from, file)
		}
	}
	from, to = store.CopyEnd{Database: o.from}, store.CopyEnd{Database: o.to, DataDir: o.data}
	if from.DataDir, err = localDir(o.from); err == nil && to.DataDir == "" {
		to.DataDir, err = localDir(o.to)
	}
	if err == nil {
		from.Blobs, err = openMigrateBlobs(ctx, "--from-blobs", o.fromBlobs, o.from)
	}
	if err == nil {
		to.Blobs, err = openMigrateBlobs(ctx, "--blobs", o.blobs, o.to)
	}
	if err != nil {
		cleanup()
	}
	return from, to, cleanup, err
}

// lockTargets are the directories migrate takes as serve does, so that it refuses while a
// registry (or another migrate, restore or offline command) holds one and none starts on
// them mid-copy: the directory of each SQLite end (the source must not change during the
// copy, nothing may serve from the destination before it is verified) and the
// destination's local state directory dataDir when --data names it.
func (o *migrateOptions) lockTargets(dataDir string) []lockTarget {
	var targets []lockTarget
	if file, ok := store.CopyDatabaseFile(o.from); ok {
		targets = append(targets, lockTarget{"--from " + o.from, filepath.Dir(file)})
	}
	if file, ok := store.CopyDatabaseFile(o.to); ok {
		targets = append(targets, lockTarget{"--to " + o.to, filepath.Dir(file)})
	}
	if o.data != "" {
		targets = append(targets, lockTarget{"--data " + o.data, dataDir})
	}
	return targets
}

// openMigrateBlobs opens the blob store flag names, defaulting to the folder beside a
// SQLite database.
func openMigrateBlobs(ctx context.Context, flagName, blobs, database string) (store.CopyBlobs, error) {
	if blobs == "" {
		file, ok := store.CopyDatabaseFile(database)
		if !ok {
			return nil, fmt.Errorf("%s is required beside %s (file:PATH or s3://BUCKET?endpoint=…)", flagName, redact(database))
		}
		blobs = "file:" + filepath.Join(filepath.Dir(file), "blobs")
	}
	if strings.HasPrefix(blobs, "s3://") {
		s, err := s3blob.Open(ctx, blobs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", flagName, err)
		}
		return s, nil
	}
	dir, ok := strings.CutPrefix(blobs, "file:")
	if !ok || dir == "" {
		return nil, fmt.Errorf("%s %q: want file:PATH or s3://BUCKET?endpoint=HOST:PORT&region=REGION", flagName, redact(blobs))
	}
	f, err := store.OpenFolder(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	return f, nil
}

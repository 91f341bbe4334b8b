package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver a copy reads and writes PostgreSQL with
)

// CopyBlobs is what Copy needs of a blob store, source or destination: the blob contract's
// Folder and s3blob.Store both satisfy it.
type CopyBlobs interface {
	// Stat is nil when the blob is present with this size.
	Stat(ctx context.Context, sha string, size int64) error
	// Open opens the blob's bytes, refusing a missing blob or one of another size.
	Open(ctx context.Context, sha string, size int64) (Blob, error)
	// Put stores the bytes of the local file src as blob sha; it may move src.
	Put(ctx context.Context, sha string, size int64, src string) error
}

// CopyEnd is one side of a copy.
type CopyEnd struct {
	// Database is sqlite:PATH (a data directory, whose registry.db is used, or a database
	// file) or a postgres:// (postgresql://) URL.
	Database string
	// DataDir is the local state directory the store is opened with (OpenURL's dataDir).
	DataDir string
	Blobs   CopyBlobs
}

// CopyOptions tune a copy; the zero value is the default.
type CopyOptions struct {
	// BatchRows is the most rows one insert carries (default 500); each batch commits
	// with its table's checkpoint.
	BatchRows int
	// BlobWorkers copy and verify blobs in parallel (default 4).
	BlobWorkers int
	// SpoolDir holds each blob between its read and its Put (default: the system's).
	SpoolDir string
	// Progress, when set, is called after every batch and every blob, never concurrently.
	Progress func(CopyProgress)
}

// CopyProgress is where a copy is.
type CopyProgress struct {
	Phase      string // "blobs", "rows", "verify rows", "verify blobs"
	Table      string // the table of a rows phase
	Rows       int64  // rows copied (or verified) so far, every table
	Blobs      int64  // blobs copied, skipped or verified so far
	BlobsTotal int64
	Bytes      int64 // blob bytes read so far
	BytesTotal int64
}

// CopyReport is what a finished copy did, once verified.
type CopyReport struct {
	Tables       []TableReport
	Derived      []string // tables left out (CopyDerived), present in the source
	Blobs        int64    // blobs in the source's blobs table
	BlobsCopied  int64
	BlobsSkipped int64 // already present in the destination with the right size
	Bytes        int64 // total bytes of the blobs
	BytesCopied  int64
	Sequences    []string // table.column sequences set past the copied rows (PostgreSQL)
	Resumed      bool     // the destination held an unfinished copy of this source
	Elapsed      time.Duration
	// The time of each phase: copying the blobs, copying the rows, verifying both.
	BlobTime, RowTime, VerifyTime time.Duration
}

// TableReport is one copied table.
type TableReport struct {
	Name     string
	Rows     int64 // rows in the source (and, verified, in the destination)
	Inserted int64 // rows this run inserted
}

// copier is one run of Copy.
type copier struct {
	opt      CopyOptions
	src, dst *sql.DB
	srcD     Dialect
	dstD     Dialect
	read     *sql.Tx // the source, read in one snapshot
	from, to CopyEnd
	report   CopyReport
	mu       sync.Mutex // serialises Progress
	progress CopyProgress
	// overwriteMeta: the destination was empty when this copy began, so its meta rows are
	// the migrations' seeds (serial 0), replaced by the source's.
	overwriteMeta bool
}

// Copy copies every table of from's schema (but CopyDerived) and every blob its blobs table
// records into to, then verifies the copy: the row count and a digest of the rows of every
// table, and the sha256 of every blob re-read from the destination. It is resumable: rows go
// in primary-key order, in batches inserted with ON CONFLICT DO NOTHING, each committed with
// its table's checkpoint in the destination's meta table; blobs present in the destination
// with the right size are skipped. A copy stopped anywhere (ctx cancelled, a crash) and run
// again gives the same verified copy. It refuses a destination holding another row under a
// key the source has (ConflictError), and a destination holding an unfinished copy of
// another source. The source must not change while it runs (stop the registry).
func Copy(ctx context.Context, from, to CopyEnd, opt CopyOptions) (*CopyReport, error) {
	start := time.Now()
	if opt.BatchRows <= 0 {
		opt.BatchRows = 500
	}
	if opt.BlobWorkers <= 0 {
		opt.BlobWorkers = 4
	}
	c := &copier{opt: opt, from: from, to: to}
	if err := c.open(ctx); err != nil {
		return nil, err
	}
	defer c.close()
	plan, err := c.plan(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.run(ctx, plan); err != nil {
		return nil, err
	}
	c.report.Elapsed = time.Since(start)
	return &c.report, nil
}

func (c *copier) run(ctx context.Context, plan []*copyTable) error {
	if err := c.begin(ctx, plan); err != nil {
		return err
	}
	start := time.Now()
	blobs, err := c.copyBlobs(ctx)
	if err != nil {
		return err
	}
	c.report.BlobTime = time.Since(start)
	start = time.Now()
	for _, t := range plan {
		if err := c.copyTable(ctx, t); err != nil {
			return err
		}
	}
	c.report.RowTime = time.Since(start)
	start = time.Now()
	if err := c.verifyTables(ctx, plan); err != nil {
		return err
	}
	if err := c.verifyBlobs(ctx, blobs); err != nil {
		return err
	}
	c.report.VerifyTime = time.Since(start)
	return c.finish(ctx)
}

// CopyDatabaseFile returns the database file of a sqlite: URL: PATH itself when it names a
// file (or ends in .db), else PATH/registry.db (PATH is a data directory).
func CopyDatabaseFile(database string) (string, bool) {
	path, ok := strings.CutPrefix(database, "sqlite:")
	if !ok {
		return "", false
	}
	path = strings.TrimPrefix(path, "//")
	if st, err := os.Stat(path); (err == nil && st.IsDir()) || (err != nil && !strings.HasSuffix(path, ".db")) {
		return filepath.Join(path, DBFile), true
	}
	return path, true
}

func copyDialectOf(database string) (Dialect, error) {
	if d, ok := dialectOf(database); ok {
		return d, nil
	}
	return 0, fmt.Errorf("store: copy: database %q: expected sqlite:PATH or postgres://…", hidePassword(database))
}

// copyIdentity names a database for the checkpoint and the same-database guard: the SQLite
// file's absolute path, or PostgreSQL's host, port and database (never the password).
func copyIdentity(database string) string {
	if file, ok := CopyDatabaseFile(database); ok {
		if abs, err := filepath.Abs(file); err == nil {
			file = abs
		}
		return "sqlite:" + file
	}
	u, err := url.Parse(database)
	if err != nil {
		return database // as written: OpenURL refuses it before anything is copied
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	return "postgres://" + u.Hostname() + ":" + port + u.Path
}

func (c *copier) open(ctx context.Context) error {
	if copyIdentity(c.from.Database) == copyIdentity(c.to.Database) {
		return fmt.Errorf("store: copy: --from and --to name the same database (%s)", copyIdentity(c.to.Database))
	}
	var err error
	if c.src, c.srcD, err = openCopyDB(ctx, c.from, false); err != nil {
		return err
	}
	if c.dst, c.dstD, err = openCopyDB(ctx, c.to, true); err != nil {
		_ = c.src.Close()
		return err
	}
	opts := &sql.TxOptions{}
	if c.srcD == Postgres {
		opts = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	if c.read, err = c.src.BeginTx(ctx, opts); err != nil {
		c.close()
		return fmt.Errorf("store: copy: read the source: %w", err)
	}
	return nil
}

func (c *copier) close() {
	if c.read != nil {
		_ = c.read.Rollback()
	}
	_ = c.src.Close()
	_ = c.dst.Close()
}

// openCopyDB brings end's schema up to date through the store (its migrations, as any
// command opening it would) and returns a plain connection pool on it: SQLite's source
// read-only, its destination one writer.
func openCopyDB(ctx context.Context, end CopyEnd, write bool) (*sql.DB, Dialect, error) {
	d, err := copyDialectOf(end.Database)
	if err != nil {
		return nil, 0, err
	}
	if file, ok := CopyDatabaseFile(end.Database); ok && !write {
		if _, err := os.Stat(file); err != nil {
			return nil, 0, fmt.Errorf("store: copy: the source %s has no registry database (%w): name the data directory or file `registry serve` uses", end.Database, err)
		}
	}
	st, err := copyOpenStore(ctx, end.Database, end.DataDir, write)
	if err != nil {
		return nil, 0, fmt.Errorf("store: copy: open %s: %w", hidePassword(end.Database), err)
	}
	if err := st.Close(); err != nil {
		return nil, 0, err
	}
	var db *sql.DB
	if d == Postgres {
		db, err = sql.Open("pgx", end.Database)
	} else {
		file, _ := CopyDatabaseFile(end.Database)
		mode := "_pragma=query_only(1)"
		if write {
			mode = "_pragma=synchronous(NORMAL)&_txlock=immediate"
		}
		db, err = sql.Open("sqlite", SQLiteURI(file)+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&"+mode)
	}
	if err == nil {
		err = db.PingContext(ctx)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("store: copy: connect to %s: %w", hidePassword(end.Database), err)
	}
	if d == SQLite && write {
		db.SetMaxOpenConns(1) // one writer, as the store has
	}
	return db, d, nil
}

func (c *copier) plan(ctx context.Context) ([]*copyTable, error) {
	src, err := readSchema(ctx, c.read, c.srcD)
	if err != nil {
		return nil, err
	}
	dst, err := readSchema(ctx, c.dst, c.dstD)
	if err != nil {
		return nil, err
	}
	for name := range src {
		if _, derived := CopyDerived[name]; derived {
			c.report.Derived = append(c.report.Derived, name)
		}
	}
	return copyPlan(src, dst)
}

// copyMark is the marker a copy keeps in the destination while it runs.
type copyMark struct {
	Source        string `json:"source"`
	OverwriteMeta bool   `json:"overwrite_meta"`
}

// begin reads or writes the destination's marker: a destination holding an unfinished copy
// of another source is refused; an empty one gets its meta seeds replaced.
func (c *copier) begin(ctx context.Context, plan []*copyTable) error {
	source := copyIdentity(c.from.Database)
	var raw string
	err := c.dst.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = "+c.dstD.param(0), copySourceKey).Scan(&raw)
	switch {
	case err == nil:
		var m copyMark
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			return fmt.Errorf("store: copy: the destination's %s marker %q: %w", copySourceKey, raw, err)
		}
		if m.Source != source {
			return fmt.Errorf("store: copy: the destination holds an unfinished copy of %s, not of %s: run that copy again to finish it, or copy into an empty database", m.Source, source)
		}
		c.overwriteMeta, c.report.Resumed = m.OverwriteMeta, true
		return nil
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("store: copy: read the destination's meta: %w", err)
	}
	empty, err := c.destinationEmpty(ctx, plan)
	if err != nil {
		return err
	}
	c.overwriteMeta = empty
	b, _ := json.Marshal(copyMark{Source: source, OverwriteMeta: empty})
	return c.putMeta(ctx, c.dst, copySourceKey, string(b))
}

func (c *copier) destinationEmpty(ctx context.Context, plan []*copyTable) (bool, error) {
	for _, t := range plan {
		if t.Name == copyMetaTable {
			continue
		}
		var one int
		err := c.dst.QueryRowContext(ctx, "SELECT 1 FROM "+quoteIdent(t.Name)+" LIMIT 1").Scan(&one)
		if err == nil {
			return false, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return false, fmt.Errorf("store: copy: read the destination's %s: %w", t.Name, err)
		}
	}
	return true, nil
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func (c *copier) putMeta(ctx context.Context, q execer, key, value string) error {
	_, err := q.ExecContext(ctx, fmt.Sprintf("INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
		c.dstD.param(0), c.dstD.param(1)), key, value)
	if err != nil {
		return fmt.Errorf("store: copy: write the checkpoint %s: %w", key, err)
	}
	return nil
}

// finish removes the marker and checkpoints of a verified copy.
func (c *copier) finish(ctx context.Context) error {
	if _, err := c.dst.ExecContext(ctx, "DELETE FROM meta WHERE key LIKE "+c.dstD.param(0), copyMarkPrefix+"%"); err != nil {
		return fmt.Errorf("store: copy: remove the checkpoints: %w", err)
	}
	return nil
}

func (c *copier) emit(update func(p *CopyProgress)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	update(&c.progress)
	if c.opt.Progress != nil {
		c.opt.Progress(c.progress)
	}
}

// copyOpenStore opens a store by URL, applying its migrations; a sqlite: URL naming a data
// directory opens its registry.db. The destination (write) may hold this copy unfinished;
// begin checks that the copy is of the same source. A source holding one is refused.
func copyOpenStore(ctx context.Context, database, dataDir string, write bool) (*Store, error) {
	if file, ok := CopyDatabaseFile(database); ok {
		if dataDir == "" {
			dataDir = filepath.Dir(file)
		}
		database = "sqlite:" + file
	}
	if dataDir == "" {
		return nil, fmt.Errorf("store: copy: %s: no local data directory given", hidePassword(database))
	}
	return openURL(ctx, database, dataDir, write)
}

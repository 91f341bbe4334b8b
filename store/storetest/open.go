package storetest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pluginyard/registry/store"
)

// DatabaseEnv names the environment variable that chooses the database OpenStore opens:
// "postgres" for PostgreSQL, anything else (or unset) for SQLite.
const DatabaseEnv = "REGISTRY_TEST_DATABASE"

// OnPostgres reports whether DatabaseEnv asks for PostgreSQL.
func OnPostgres() bool { return os.Getenv(DatabaseEnv) == "postgres" }

// OpenStore opens a fresh, empty store closed in tb.Cleanup, with tb.TempDir() as its data
// directory: on SQLite (the database file in that directory), or, with
// REGISTRY_TEST_DATABASE=postgres, on a fresh database of one PostgreSQL server that the
// test binary shares (SharedPostgres).
func OpenStore(tb testing.TB) *store.Store {
	tb.Helper()
	url, dir := NewDatabase(tb)
	s, err := store.OpenURL(context.Background(), url, dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// NewDatabase is the URL of a fresh, empty database and a fresh data directory, for a
// test that opens the store more than once (a restart, a second replica) with
// store.OpenURL: a SQLite file in the data directory, or with REGISTRY_TEST_DATABASE=postgres
// a new database on the shared server, dropped in tb.Cleanup.
func NewDatabase(tb testing.TB) (databaseURL, dataDir string) {
	tb.Helper()
	dataDir = tb.TempDir()
	if OnPostgres() {
		return CreateDatabase(tb, SharedPostgres(tb)), dataDir
	}
	return "sqlite:" + filepath.Join(dataDir, store.DBFile), dataDir
}

// shared is the server SharedPostgres starts once per test binary.
var shared struct {
	once sync.Once
	dsn  string
	err  error
}

// SharedPostgres returns the DSN of the postgres database of a server started on first
// use and shared by every test of the binary: CreateDatabase gives each test its own
// database on it for the cost of a CREATE DATABASE. The server outlives any one test; a
// watchdog process stops it and removes its folder when the test binary exits, however it
// exits. Like StartPostgres it skips tb without the server binaries, or fails it with
// CI=true.
func SharedPostgres(tb testing.TB) string {
	tb.Helper()
	shared.once.Do(func() { shared.dsn, shared.err = startShared() })
	if shared.err != nil {
		unavailable(tb, shared.err)
	}
	return shared.dsn
}

func startShared() (string, error) {
	pg, err := newServer()
	if err != nil {
		return "", err
	}
	if err := pg.initdb(); err != nil {
		_ = os.RemoveAll(pg.dir)
		return "", err
	}
	if err := pg.start(); err != nil {
		_ = os.RemoveAll(pg.dir)
		return "", err
	}
	if err := pg.watch(); err != nil {
		_ = pg.stop()
		_ = os.RemoveAll(pg.dir)
		return "", err
	}
	return pg.dsn(), nil
}

// watch starts the watchdog: a shell, as the server's user and in a process group of its
// own (an interrupt from the terminal must not end it before the server), that waits for its standard
// input to close (this process exiting closes the pipe's write end, which only it holds)
// and then stops the server at once and removes its folder.
func (pg *pgServer) watch() error {
	script := `cat >/dev/null; "$1/pg_ctl" -D "$2/data" -m immediate -w stop >/dev/null 2>&1; rm -rf "$2"`
	cmd := exec.Command("/bin/sh", "-c", script, "watchdog", pg.bin, pg.dir)
	cmd.SysProcAttr = pg.owner.detachedAttr()
	w, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("storetest: postgres watchdog: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("storetest: postgres watchdog: %w", err)
	}
	keep = append(keep, w) // never closed: the pipe lives as long as this process
	go func() { _ = cmd.Wait() }()
	return nil
}

// keep holds the watchdogs' pipes so that no finalizer closes them.
var keep []any

package replicas

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pluginyard/registry/store/storetest"
)

// Postgres is the throwaway server of storetest.StartPostgres, which a fault test can stop
// and start again on the same port and data directory (pg_ctl, as the server's user).
type Postgres struct {
	DSN string // the server's postgres database

	bin, data, logFile, port string
	cred                     *syscall.Credential

	mu      sync.Mutex
	stopped bool
}

// StartPostgres starts a server (skipping tb without PostgreSQL, failing it with CI=true)
// and learns from the server itself where it lives, to stop and start it later. If a test
// ends while the server is stopped, it is started again before storetest's own cleanup.
func StartPostgres(tb testing.TB) *Postgres {
	tb.Helper()
	pg := &Postgres{DSN: storetest.StartPostgres(tb)}
	settings, err := pg.settings()
	if err != nil {
		tb.Fatal(err)
	}
	pg.bin, pg.data, pg.port = settings["BINDIR"], settings["data_directory"], settings["port"]
	pg.logFile = filepath.Join(filepath.Dir(pg.data), "server.log")
	var st syscall.Stat_t
	if err := syscall.Stat(pg.data, &st); err != nil {
		tb.Fatalf("replicas: postgres data directory %s: %v", pg.data, err)
	}
	if int(st.Uid) != os.Geteuid() {
		pg.cred = &syscall.Credential{Uid: st.Uid, Gid: st.Gid, Groups: []uint32{}}
	}
	tb.Cleanup(func() {
		if pg.isStopped() {
			if err := pg.Start(); err != nil {
				tb.Error(err)
			}
		}
	})
	return pg
}

// settings reads the server's data directory, port and binary folder.
func (pg *Postgres) settings() (map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pg.DSN)
	if err != nil {
		return nil, fmt.Errorf("replicas: connect to %s: %w", pg.DSN, err)
	}
	defer conn.Close(ctx)
	out := map[string]string{}
	for _, name := range []string{"data_directory", "port"} {
		var v string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err != nil {
			return nil, fmt.Errorf("replicas: postgres setting %s: %w", name, err)
		}
		out[name] = v
	}
	var bin string
	if err := conn.QueryRow(ctx, "SELECT setting FROM pg_config WHERE name = 'BINDIR'").Scan(&bin); err != nil {
		return nil, fmt.Errorf("replicas: postgres BINDIR: %w", err)
	}
	out["BINDIR"] = bin
	return out, nil
}

// CreateDatabase is a fresh, empty database on the server; its URL is what --database takes.
func (pg *Postgres) CreateDatabase(tb testing.TB) string {
	tb.Helper()
	return storetest.CreateDatabase(tb, pg.DSN)
}

// Stop shuts the server down (fast: every session is ended) and waits until it is gone:
// connections are refused until Start.
func (pg *Postgres) Stop() error {
	if err := pg.pgCtl("-D", pg.data, "-m", "fast", "-w", "-t", "60", "stop"); err != nil {
		return err
	}
	pg.mu.Lock()
	pg.stopped = true
	pg.mu.Unlock()
	return nil
}

// Start starts the stopped server again on its port and waits until it accepts
// connections.
func (pg *Postgres) Start() error {
	if err := pg.pgCtl("-D", pg.data, "-l", pg.logFile, "-w", "-t", "60", "-o", "-p "+pg.port, "start"); err != nil {
		return err
	}
	pg.mu.Lock()
	pg.stopped = false
	pg.mu.Unlock()
	return nil
}

func (pg *Postgres) isStopped() bool {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	return pg.stopped
}

func (pg *Postgres) pgCtl(args ...string) error {
	cmd := exec.Command(filepath.Join(pg.bin, "pg_ctl"), args...)
	cmd.Dir = filepath.Dir(pg.data)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	if pg.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: pg.cred}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("replicas: pg_ctl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// Query runs one query on database url and returns its rows as strings, for checks of
// what the replicas stored (the schema_migrations table).
func Query(url, query string, args ...any) ([][]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("replicas: connect: %w", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("replicas: %s: %w", query, err)
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, fmt.Errorf("replicas: %s: %w", query, err)
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = fmt.Sprint(v)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("replicas: %s: %w", query, err)
	}
	return out, nil
}

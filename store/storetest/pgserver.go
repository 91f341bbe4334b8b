package storetest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// binGlob finds Debian's PostgreSQL server binaries, one folder per major version.
var binGlob = "/usr/lib/postgresql/*/bin"

// startAttempts bounds the retries of a start whose free port was taken meanwhile.
const startAttempts = 3

// pgServer is one throwaway PostgreSQL cluster: its binaries, its folder (the data
// directory, the unix socket, the log) and the user it runs as (nil: the current one).
type pgServer struct {
	bin, dir string
	owner    *account
	port     int
}

// StartPostgres starts a PostgreSQL server of tb's own and returns the DSN of its
// postgres database (superuser postgres, trust authentication, no TLS): initdb in a new
// temporary folder, the server on a free port of 127.0.0.1 with its unix socket in that
// folder, ready when StartPostgres returns, stopped and removed in tb.Cleanup. Running as
// root, the server runs as the postgres user (or nobody), since PostgreSQL refuses root.
// Without the server binaries (Debian's postgresql package) it skips tb, except with
// CI=true, where it fails it: in CI these tests must run.
func StartPostgres(tb testing.TB) string {
	tb.Helper()
	return StartPostgresServer(tb).DSN()
}

// Server is a throwaway PostgreSQL server that a fault test may stop and start again.
type Server struct{ pg *pgServer }

// StartPostgresServer is StartPostgres returning the server itself.
func StartPostgresServer(tb testing.TB) *Server {
	tb.Helper()
	pg, err := newServer()
	if err != nil {
		unavailable(tb, err)
	}
	tb.Cleanup(func() { _ = os.RemoveAll(pg.dir) })
	if err := pg.initdb(); err != nil {
		tb.Fatal(err)
	}
	if err := pg.start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := pg.stop(); err != nil && pg.running() {
			tb.Error(err)
		}
	})
	return &Server{pg: pg}
}

// DSN is the URL of the server's postgres database.
func (s *Server) DSN() string { return s.pg.dsn() }

// Stop shuts the server down (fast: open sessions are ended); Start brings it back.
func (s *Server) Stop() error { return s.pg.stop() }

// Start starts a stopped server again, on the port it had.
func (s *Server) Start() error { return s.pg.startOn(s.pg.port) }

// newServer finds the binaries and the user and makes the cluster's folder.
func newServer() (*pgServer, error) {
	bin, err := postgresBin()
	if err != nil {
		return nil, err
	}
	owner, err := serverUser()
	if err != nil {
		return nil, err
	}
	pg := &pgServer{bin: bin, owner: owner}
	if pg.dir, err = pg.makeDir(); err != nil {
		return nil, err
	}
	return pg, nil
}

func (pg *pgServer) dsn() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.port)
}

// running reports whether the server's postmaster.pid is there.
func (pg *pgServer) running() bool {
	_, err := os.Stat(filepath.Join(pg.data(), "postmaster.pid"))
	return err == nil
}

// unavailable skips tb for want of a server, or with CI=true fails it.
func unavailable(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("storetest: with CI=true the PostgreSQL tests must run, not skip: %v", err)
	}
	tb.Skipf("storetest: no PostgreSQL server for this test: %v", err)
}

// postgresBin is the folder of the newest PostgreSQL server binaries: Debian's, else
// those initdb on PATH is in.
func postgresBin() (string, error) {
	dirs, _ := filepath.Glob(binGlob)
	dirs = slices.DeleteFunc(dirs, func(d string) bool { return !hasServer(d) })
	slices.SortFunc(dirs, func(a, b string) int { return majorOf(b) - majorOf(a) })
	if len(dirs) > 0 {
		return dirs[0], nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && hasServer(filepath.Dir(real)) {
			return filepath.Dir(real), nil
		}
	}
	return "", fmt.Errorf("no PostgreSQL server binaries: %s/{initdb,pg_ctl,postgres} match nothing and initdb is not on PATH; install Debian's postgresql (apt-get install postgresql)", binGlob)
}

func hasServer(dir string) bool {
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.IsDir() {
			return false
		}
	}
	return true
}

// majorOf is the major version of a …/postgresql/<major>/bin folder, 0 when unknown.
func majorOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// makeDir is the cluster's folder: short (a unix socket path is at most 107 bytes) and,
// for another user, theirs.
func (pg *pgServer) makeDir() (string, error) {
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return "", fmt.Errorf("storetest: postgres folder: %w", err)
	}
	if pg.owner != nil {
		if err := os.Chown(dir, pg.owner.uid, pg.owner.gid); err != nil {
			_ = os.RemoveAll(dir)
			return "", fmt.Errorf("storetest: give %s to user %s: %w", dir, pg.owner.name, err)
		}
	}
	return dir, nil
}

// run runs one PostgreSQL program as the server's user, from its folder.
func (pg *pgServer) run(name string, args ...string) error {
	cmd := exec.Command(filepath.Join(pg.bin, name), args...)
	cmd.Dir, cmd.Env, cmd.SysProcAttr = pg.dir, append(os.Environ(), "LC_ALL=C", "TZ=UTC"), pg.owner.procAttr()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("storetest: %s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

func (pg *pgServer) data() string { return filepath.Join(pg.dir, "data") }

// initdb creates the cluster and configures it for tests: loopback only, the socket in
// its folder, no fsync (a test's data need not survive a crash).
func (pg *pgServer) initdb() error {
	if err := pg.run("initdb", "-D", pg.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return err
	}
	conf := fmt.Sprintf("\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\n"+
		"fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n", strings.ReplaceAll(pg.dir, "'", "''"))
	f, err := os.OpenFile(filepath.Join(pg.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("storetest: postgres config: %w", err)
	}
	_, werr := f.WriteString(conf)
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("storetest: postgres config: %w", err)
	}
	return nil
}

// start starts the server on a free port and waits until it accepts connections; a port
// taken between choosing it and binding it is chosen again.
func (pg *pgServer) start() error {
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		err = pg.startOn(port)
		if err == nil || attempt == startAttempts || !strings.Contains(err.Error(), "already in use") {
			return err
		}
	}
}

// startOn starts the server on port and waits until it accepts connections.
func (pg *pgServer) startOn(port int) error {
	logPath := filepath.Join(pg.dir, "server.log")
	err := pg.run("pg_ctl", "-D", pg.data(), "-l", logPath, "-w", "-t", "60", "-o", "-p "+strconv.Itoa(port), "start")
	if err != nil {
		log, _ := os.ReadFile(logPath)
		return fmt.Errorf("%w\nserver log:\n%s", err, log)
	}
	pg.port = port
	return pg.dial()
}

// dial checks that the server answers on its TCP port.
func (pg *pgServer) dial() error {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(pg.port)), 10*time.Second)
	if err != nil {
		return fmt.Errorf("storetest: postgres started but does not answer on port %d: %w", pg.port, err)
	}
	return c.Close()
}

// stop shuts the server down (fast: open sessions are ended) and waits for it.
func (pg *pgServer) stop() error {
	return pg.run("pg_ctl", "-D", pg.data(), "-m", "fast", "-w", "-t", "60", "stop")
}

// freePort is a TCP port of 127.0.0.1 free when asked.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("storetest: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

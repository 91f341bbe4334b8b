package storetest_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
)

// TestOpenStoreBackend: OpenStore opens SQLite, or PostgreSQL when the environment asks.
func TestOpenStoreBackend(t *testing.T) {
	want := store.SQLite
	if storetest.OnPostgres() {
		want = store.Postgres
	}
	if got := storetest.OpenStore(t).Dialect(); got != want {
		t.Errorf("OpenStore with %s=%q: %v, want %v", storetest.DatabaseEnv, os.Getenv(storetest.DatabaseEnv), got, want)
	}
}

// childEnv makes the test binary, run again, start the shared server, print its DSN and
// data directory, and exit without any cleanup of its own.
const childEnv = "STORETEST_SHARED_CHILD"

func TestSharedPostgresChild(t *testing.T) {
	if os.Getenv(childEnv) != "1" {
		t.Skip("run by TestSharedPostgresStopsWithTheBinary")
	}
	dsn := storetest.SharedPostgres(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	var dataDir string
	if err := conn.QueryRow(ctx, "SELECT current_setting('data_directory')").Scan(&dataDir); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("DSN=%s\nDATA=%s\n", dsn, dataDir)
	os.Exit(0) // no cleanup runs: only the watchdog can stop the server
}

// TestSharedPostgresStopsWithTheBinary: the server SharedPostgres starts is stopped once
// the test binary that started it has exited, even one that ran no cleanup.
func TestSharedPostgresStopsWithTheBinary(t *testing.T) {
	storetest.StartPostgres(t) // skips (or with CI=true fails) without the binaries
	cmd := exec.Command(os.Args[0], "-test.run=^TestSharedPostgresChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	dsn, dataDir := printed(string(out), "DSN="), printed(string(out), "DATA=")
	if dsn == "" || dataDir == "" {
		t.Fatalf("child printed no DSN and data directory:\n%s", out)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err != nil {
			break
		}
		_ = c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("%s still accepts connections a minute after its test binary exited", u.Host)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for {
		_, err := os.Stat(dataDir)
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("data directory %s a minute after its server stopped: %v, want it removed", dataDir, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// printed is the rest of the line of out that starts with prefix, "" when none does.
func printed(out, prefix string) string {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

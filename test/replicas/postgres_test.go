package replicas_test

import (
	"testing"

	"github.com/pluginyard/registry/test/replicas"
)

// A test that ends while its server is stopped still has its database dropped: the server
// is started again first (without that, storetest's DROP DATABASE fails the test).
func TestPostgresStoppedAtTheEnd(t *testing.T) {
	var url string
	t.Run("stops the server and ends", func(t *testing.T) {
		pg := replicas.StartPostgres(t)
		url = pg.CreateDatabase(t)
		if err := pg.Stop(); err != nil {
			t.Fatal(err)
		}
		if _, err := replicas.Query(url, "SELECT 1"); err == nil {
			t.Fatal("Query on a stopped server: no error")
		}
	})
	if url == "" {
		t.Fatal("no database was created")
	}
}

// Start brings a stopped server back on the same port: the database URL works again.
func TestPostgresStopStart(t *testing.T) {
	pg := replicas.StartPostgres(t)
	url := pg.CreateDatabase(t)
	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	rows, err := replicas.Query(url, "SELECT 1")
	if err != nil {
		t.Fatalf("Query after Start: %v", err)
	}
	if len(rows) != 1 || len(rows[0]) != 1 || rows[0][0] != "1" {
		t.Errorf("SELECT 1 = %v, want [[1]]", rows)
	}
}

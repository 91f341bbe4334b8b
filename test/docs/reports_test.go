package docs_test

import (
	"net/http"
	"strings"
	"testing"
)

// fileReport files a report of id through the API, as a reader of docs/reports.md would
// from the package's page, so that `registry reports` has one to list and resolve.
func (s *session) fileReport(t *testing.T, id, body string) {
	t.Helper()
	res, err := http.Post(s.url+"/api/v1/plugins/"+id+"/reports", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("report of %s: %d, want 201", id, res.StatusCode)
	}
}

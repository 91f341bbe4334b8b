package server_test

import (
	"net/http"
	"testing"
)

// TestCategoryWildcardsAreLiteral: "%" and "_" in a category filter or a category page
// are ordinary characters, not LIKE wildcards that match every package.
func TestCategoryWildcardsAreLiteral(t *testing.T) {
	e := newEnv(t, "")
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	for _, tt := range []struct {
		category string
		want     int
	}{{"tools", 1}, {"%25", 0}, {"%25%25", 0}, {"t_ols", 0}, {"_____", 0}, {"%5C", 0}} {
		var list struct{ Total int }
		r := e.get("/api/v1/plugins?category=" + tt.category)
		r.json(t, &list)
		if r.Status != http.StatusOK || list.Total != tt.want {
			t.Errorf("?category=%s: %d, total %d, want total %d", tt.category, r.Status, list.Total, tt.want)
		}
	}
	for path, want := range map[string]int{"/categories/tools": 200, "/categories/%25": 404, "/categories/t_ols": 404} {
		if r := e.get(path); r.Status != want {
			t.Errorf("GET %s: %d, want %d", path, r.Status, want)
		}
	}
}

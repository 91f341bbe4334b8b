package server_test

import (
	"archive/tar"
	"net/http"
	"strings"
	"testing"
)

// TestHostileArchives: archive attacks through HTTP.
func TestHostileArchives(t *testing.T) {
	m := manifestYAML("acme-hello", "1.0.0", "")
	runHostile(t, []hostileCase{
		{name: "path traversal", status: http.StatusUnprocessableEntity, rule: "archive.path.dotdot",
			pkg: func(t *testing.T) []byte { return withManifest(t, m, regular("../evil", "x")) }},
		{name: "symlink", status: http.StatusUnprocessableEntity, rule: "archive.symlink",
			pkg: func(t *testing.T) []byte {
				return withManifest(t, m, tarEntry{hdr: &tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd", Mode: 0o777}})
			}},
		{name: "unknown token with a huge manifest gets 401", token: "reg_notatoken", status: http.StatusUnauthorized,
			pkg: func(t *testing.T) []byte { return withManifest(t, manifestYAML("acme-hello", "1.0.0", "x: "+strings.Repeat("a", 1<<20)+"\n")) }},
	})
}

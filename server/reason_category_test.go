package server_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// TestReasonsArePlainText: a yank or deprecation reason with control or format characters,
// and a replacement that is not a package id, are refused with a 400 naming the field;
// nothing reaches index.json.
func TestReasonsArePlainText(t *testing.T) {
	e := newEnv(t, "")
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	const yank, deprecate = "/api/v1/plugins/acme-hello/versions/1.0.0/yank", "/api/v1/plugins/acme-hello/deprecate"
	for _, tt := range []struct {
		name, path, field string
		body              map[string]string
		want              int
	}{
		{"yank bidi override", yank, "reason", map[string]string{"reason": "safe\u202eexe.txt"}, 400},
		{"yank escape", yank, "reason", map[string]string{"reason": "x\x1b[31mred"}, 400},
		{"yank bell", yank, "reason", map[string]string{"reason": "ding\a"}, 400},
		{"deprecate CRLF", deprecate, "reason", map[string]string{"reason": "old\r\nInjected: line"}, 400},
		{"deprecate javascript replacement", deprecate, "replacement", map[string]string{"reason": "old", "replacement": "javascript:alert(1)"}, 400},
		{"deprecate replacement with a space", deprecate, "replacement", map[string]string{"reason": "old", "replacement": "acme other"}, 400},
		{"deprecate plugin replacement", deprecate, "", map[string]string{"reason": "use the other", "replacement": "acme-other"}, 200},
		// A scoped name passes the id shape; this registry lists no such extension, so it is refused as unlisted.
		{"deprecate unlisted extension replacement", deprecate, "is not listed", map[string]string{"reason": "use the extension", "replacement": "@acme/hello-ext"}, 400},
		{"yank plain reason", yank, "", map[string]string{"reason": "broken build — see issue #4"}, 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.post(tt.path, adminToken, tt.body)
			if r.Status != tt.want {
				t.Fatalf("%d %s, want %d", r.Status, r.Body, tt.want)
			}
			if tt.field != "" && !strings.Contains(string(r.Body), tt.field) {
				t.Errorf("the refusal does not name %s: %s", tt.field, r.Body)
			}
		})
	}
	idx := e.get("/index.json").Body
	for _, bad := range []string{`\u202e`, `\u001b`, `\u0007`, `\r`, "javascript:", "\u202e", "\x1b"} {
		if bytes.Contains(idx, []byte(bad)) {
			t.Errorf("index.json carries %q", bad)
		}
	}
}

// TestCategoryControlCharacters: a category with a NUL (which SQLite's LIKE stops at, so
// it matched every package), another control character or a space is refused, and the
// page never prints it raw.
func TestCategoryControlCharacters(t *testing.T) {
	e := newEnv(t, "")
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	for _, cat := range []string{"%00", "%00x", "tools%00", "%1b", "tools%20automation", "%E2%80%AEtools"} {
		r := e.get("/api/v1/plugins?category=" + cat)
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "category") {
			t.Errorf("?category=%s: %d %s, want 400 naming the category", cat, r.Status, r.Body)
		}
		p := e.get("/categories/" + cat)
		if p.Status != http.StatusNotFound {
			t.Errorf("/categories/%s: %d, want 404", cat, p.Status)
		}
		if bytes.ContainsAny(p.Body, "\x00\x1b") {
			t.Errorf("/categories/%s prints a raw control character", cat)
		}
	}
	if r := e.get("/api/v1/plugins?category=tools"); r.Status != http.StatusOK {
		t.Errorf("?category=tools: %d %s", r.Status, r.Body)
	}
}

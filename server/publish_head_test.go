package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// HEAD answers wherever GET does, with GET's status and headers and no body.
func TestHeadWorksWhereverGetDoes(t *testing.T) {
	e := newEnv(t, "")
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	fill := strings.NewReplacer(":id", "acme-hello", ":version", "1.0.0", ":file", "acme-hello-1.0.0.tar.gz", ":name", "tools",
		":section", "authors", "*", "x")
	n := 0
	for _, rt := range e.routes() {
		if rt.Method != http.MethodGet {
			continue
		}
		n++
		path := fill.Replace(rt.Path)
		get := e.request(http.MethodGet, path)
		head := e.request(http.MethodHead, path)
		sameType := get.Status >= 400 || head.Header.Get("Content-Type") == get.Header.Get("Content-Type")
		if head.Status != get.Status || len(head.Body) != 0 || !sameType {
			t.Errorf("HEAD %s: %d (%d body bytes, %q), GET: %d (%q)", path, head.Status, len(head.Body), head.Header.Get("Content-Type"),
				get.Status, get.Header.Get("Content-Type"))
		}
	}
	if n < 20 {
		t.Errorf("only %d GET routes checked", n)
	}
}

// request sends an admin-authenticated request without a body.
func (e *env) request(method, path string) response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	return e.do(req)
}

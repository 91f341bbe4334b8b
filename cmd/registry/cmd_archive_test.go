package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestArchiveOffline(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := MustStore(t, dir)
	insertRelease(t, st, "acme-hello", "1.0.0", "plugin", "hello")
	_ = st.Close()
	steps := []struct {
		cmd      func(context.Context, *cli, []string) int
		id       string
		wantCode int
		wantOut  string
		archived bool
	}{
		{cmdArchive, "acme-hello", exitOK, "archived acme-hello", true},
		{cmdArchive, "acme-hello", exitOK, "acme-hello was archived already", true},
		{cmdUnarchive, "acme-hello", exitOK, "unarchived acme-hello", false},
		{cmdArchive, "nobody", exitInvalid, "", false},
	}
	for i, s := range steps {
		c, out, errOut := testCLI(nil)
		if code := s.cmd(ctx, c, []string{"--data", dir, s.id}); code != s.wantCode || !strings.Contains(out.String(), s.wantOut) {
			t.Fatalf("step %d: exit %d, out %q, err %q; want %d and %q", i, code, out, errOut, s.wantCode, s.wantOut)
		}
		if s.wantCode != exitOK {
			continue
		}
		st := MustStore(t, dir)
		pkg, err := st.Package(ctx, "acme-hello")
		_ = st.Close()
		if err != nil || (pkg.ArchivedAt != nil) != s.archived {
			t.Fatalf("step %d: package %+v, %v; want archived %v", i, pkg, err, s.archived)
		}
	}
}

// Online, the command posts to the registry with REGISTRY_TOKEN and reports a refusal's
// problems with exit 1.
func TestArchiveOnline(t *testing.T) {
	var gotPath, gotAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotAuth = r.Method+" "+r.URL.Path, r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.URL.Path, "someone-else") {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"error":"publisher:acme may not archive \"someone-else\": only its owners","problems":[]}`))
			return
		}
		_, _ = w.Write([]byte(`{"id":"acme-hello","archived":true,"archived_at":"2026-12-01T13:00:00Z","changed":true}`))
	}))
	defer srv.Close()
	env := map[string]string{"REGISTRY_TOKEN": "pyr_secret"}
	c, out, errOut := testCLI(env)
	if code := cmdArchive(context.Background(), c, []string{"--registry", srv.URL, "acme-hello"}); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if gotPath != "POST /api/v1/plugins/acme-hello/archive" || gotAuth != "Bearer pyr_secret" || !strings.Contains(out.String(), "archived acme-hello") {
		t.Errorf("request %q with %q, output %q", gotPath, gotAuth, out)
	}
	c, _, errOut = testCLI(env)
	if code := cmdUnarchive(context.Background(), c, []string{"--registry", srv.URL, "someone-else"}); code != exitInvalid || !strings.Contains(errOut.String(), "may not archive") {
		t.Errorf("refused unarchive: exit %d, %q; want 1 and the registry's message", code, errOut)
	}
	if gotPath != "POST /api/v1/plugins/someone-else/unarchive" {
		t.Errorf("request %q", gotPath)
	}
	c, _, errOut = testCLI(nil)
	if code := cmdArchive(context.Background(), c, []string{"--registry", srv.URL, "acme-hello"}); code != exitUsage || !strings.Contains(errOut.String(), "REGISTRY_TOKEN") {
		t.Errorf("without a token: exit %d, %q", code, errOut)
	}
}

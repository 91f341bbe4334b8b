package server_test

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/translog"
	"github.com/pluginyard/registry/verify"
)

// newSignedEnv is newEnv with an index key: the documents are signed against a checkpoint.
func newSignedEnv(t *testing.T) (*env, note.Verifier) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, "registry.test/log")
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := note.NewSigner(skey)
	verifier, _ := note.NewVerifier(vkey)
	e := newEnv(t, "")
	e.close()
	st, err := store.Open(context.Background(), filepath.Join(e.dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	l, _, _ := index.LoadList(e.list)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e.st, e.srv = st, httptest.NewUnstartedServer(nil)
	publicURL := "http://" + e.srv.Listener.Addr().String()
	e.svc = ingest.New(st, l, ingest.Config{PublicURL: publicURL, Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits(),
		IndexSigner: signer, LogCheckpoint: func(context.Context) (translog.Checkpoint, error) {
			return translog.SignCheckpoint(signer, 0, tlog.Hash{})
		}}, log)
	t.Cleanup(e.svc.Close) // its background writes end before the test data is removed
	if err := e.svc.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.srv.Config.Handler = server.New(server.Config{PublicURL: publicURL, AdminSecret: adminToken, MaxBodyBytes: 2 << 20}, e.svc, e.st, log)
	e.srv.Start()
	return e, verifier
}

func TestIndexSignaturesVerifyTheServedDocuments(t *testing.T) {
	e, v := newSignedEnv(t)
	check := func(doc string, min int64) int64 {
		t.Helper()
		body, sig := e.get("/"+doc), e.get("/"+doc+".sig")
		if sig.Status != http.StatusOK || sig.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Fatalf("GET /%s.sig: %d %s %s", doc, sig.Status, sig.Header.Get("Content-Type"), sig.Body)
		}
		st, err := ingest.VerifyIndexSignature(sig.Body, ingest.IndexCheck{Document: doc, Body: body.Body, Verifier: v, MinSerial: min, Now: time.Now()})
		if err != nil {
			t.Fatalf("/%s.sig does not verify /%s: %v", doc, doc, err)
		}
		return st.Serial
	}
	before := check(ingest.KandevDocument, 0)
	check(ingest.CurupiraDocument, 0)
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello.")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	if after := check(ingest.KandevDocument, before); after <= before {
		t.Errorf("serial after a publish %d, want more than %d", after, before)
	}
	if r := e.request(http.MethodHead, "/curupira/index.json.sig"); r.Status != http.StatusOK || len(r.Body) != 0 {
		t.Errorf("HEAD /curupira/index.json.sig: %d with %d body bytes", r.Status, len(r.Body))
	}
}

func TestIndexSignatureUnavailableWithoutKey(t *testing.T) {
	e := newEnv(t, "")
	for _, path := range []string{"/index.json.sig", "/curupira/index.json.sig"} {
		if r := e.get(path); r.Status != http.StatusServiceUnavailable {
			t.Errorf("GET %s without a key: %d %s, want 503", path, r.Status, r.Body)
		}
	}
}

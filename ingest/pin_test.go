package ingest

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify/signature"
)

func TestSignerIdentityPinnedOnFirstUse(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := New(st, &index.List{}, Config{PublicURL: "http://x"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	first := &signature.Result{Type: "sigstore", Repository: "acme/plugin", RepositoryID: "100", OwnerID: "7"}
	if p := s.checkProvenance(ctx, "acme-plugin", listing{Repo: "acme/plugin"}, first); p != nil {
		t.Fatalf("first use refused: %v", p)
	}
	if p := s.checkProvenance(ctx, "acme-plugin", listing{Repo: "acme/plugin"}, first); p != nil {
		t.Fatalf("same identity refused: %v", p)
	}
	recreated := &signature.Result{Type: "sigstore", Repository: "acme/plugin", RepositoryID: "200", OwnerID: "7"}
	p := s.checkProvenance(ctx, "acme-plugin", listing{Repo: "acme/plugin"}, recreated)
	if p == nil || p.Rule != "signature.identity.changed" {
		t.Fatalf("re-created repository: %v, want signature.identity.changed", p)
	}
	if err := st.DeletePin(ctx, "acme-plugin", store.AuditEntry{Actor: "t", Action: "pin.reset"}); err != nil {
		t.Fatal(err)
	}
	if p := s.checkProvenance(ctx, "acme-plugin", listing{Repo: "acme/plugin"}, recreated); p != nil {
		t.Fatalf("after reset: %v", p)
	}
}

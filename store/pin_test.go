package store_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pluginyard/registry/store"
)

func TestPinWorkflowAndReplace(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	first := store.Pin{Subject: "acme", Repository: "acme/acme", RepositoryID: "1", OwnerID: "2", Workflow: ".github/workflows/release.yml", Source: "sigstore"}
	if _, err := s.PinOnFirstUse(ctx, first); err != nil {
		t.Fatal(err)
	}
	ignoreAt := cmpopts.IgnoreFields(store.Pin{}, "PinnedAt")
	got, err := s.GetPin(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(first, *got, ignoreAt); d != "" {
		t.Errorf("pin (-want +got):\n%s", d)
	}
	moved := store.Pin{Subject: "acme", Repository: "acme/next", RepositoryID: "3", OwnerID: "2", Workflow: ".github/workflows/publish.yml", Source: "sigstore"}
	if err := s.ReplacePin(ctx, moved, store.AuditEntry{Actor: "plugins.yaml", Action: "pin.replace", Target: "acme", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetPin(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(moved, *got, ignoreAt); d != "" {
		t.Errorf("replaced pin (-want +got):\n%s", d)
	}
	log, err := s.AuditLog(ctx, 10, 0)
	if err != nil || len(log) != 1 || log[0].Action != "pin.replace" {
		t.Errorf("audit = %+v, %v; want the pin.replace entry", log, err)
	}
}

package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pluginyard/registry/store"
)

func blockSHA(i int) string { return fmt.Sprintf("%064x", i+1) }

// TestBlocklistAddRemove: entries are added (a second add replaces the reason), found by
// BlockedAmong among many digests (past one query batch), removed, and every change is
// audited in the same transaction.
func TestBlocklistAddRemove(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	audit := func(action, sha string) store.AuditEntry {
		return store.AuditEntry{Actor: "cli", Action: action, Target: sha, Outcome: "ok"}
	}
	for i, reason := range []string{"first", "malware"} {
		added, err := s.AddBlock(ctx, store.Block{SHA256: blockSHA(700), Reason: reason, AddedBy: "cli"}, audit("blocklist.add", blockSHA(700)))
		if err != nil || added != (i == 0) {
			t.Fatalf("add #%d: added %v, err %v", i, added, err)
		}
	}
	if _, err := s.AddBlock(ctx, store.Block{SHA256: blockSHA(3), Reason: "leak", AddedBy: "cli"}, audit("blocklist.add", blockSHA(3))); err != nil {
		t.Fatal(err)
	}
	var shas []string
	for i := range 1200 {
		shas = append(shas, blockSHA(i))
	}
	got, err := s.BlockedAmong(ctx, shas)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[blockSHA(700)].Reason != "malware" || got[blockSHA(3)].Reason != "leak" {
		t.Fatalf("BlockedAmong = %v; want the two entries, the first with its second reason", got)
	}
	if err := s.RemoveBlock(ctx, blockSHA(3), audit("blocklist.remove", blockSHA(3))); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveBlock(ctx, blockSHA(3), audit("blocklist.remove", blockSHA(3))); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second remove: %v, want ErrNotFound", err)
	}
	list, err := s.Blocks(ctx)
	if err != nil || len(list) != 1 || list[0].SHA256 != blockSHA(700) {
		t.Fatalf("Blocks = %v, %v", list, err)
	}
	log, err := s.AuditLog(ctx, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range log {
		actions = append(actions, e.Action)
	}
	want := []string{"blocklist.remove", "blocklist.add", "blocklist.add", "blocklist.add"}
	if diff := cmp.Diff(want, actions); diff != "" {
		t.Errorf("audit actions (-want +got):\n%s", diff)
	}
}

// TestBlocklistRefusesMalformedDigests: the table's CHECK keeps anything but 64 lowercase
// hex digits and an empty reason out, whatever the caller checked.
func TestBlocklistRefusesMalformedDigests(t *testing.T) {
	s := MustOpen(t)
	for _, b := range []store.Block{
		{SHA256: strings.ToUpper(blockSHA(0xabc)), Reason: "x"},
		{SHA256: blockSHA(1)[:63], Reason: "x"},
		{SHA256: blockSHA(1)[:63] + "g", Reason: "x"},
		{SHA256: blockSHA(1), Reason: ""},
	} {
		if _, err := s.AddBlock(context.Background(), b, store.AuditEntry{Actor: "t", Action: "blocklist.add"}); err == nil {
			t.Errorf("AddBlock(%q, reason %q) succeeded", b.SHA256, b.Reason)
		}
	}
}

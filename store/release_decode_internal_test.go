package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// TestAllReleasesOverBatches: AllReleases decodes its rows in batches over workers and
// gives every row, in id order, each with its own card, for a table of several batches
// with a short last one; a row whose card does not decode fails it, naming the first such
// row in id order however the workers ran.
func TestAllReleasesOverBatches(t *testing.T) {
	ctx := context.Background()
	s := openScoreStore(t)
	n := 2*releaseBatch + 3
	rels := make([]*Release, n)
	for i := range rels {
		id := fmt.Sprintf("batch-%04d", i)
		sum := sha256.Sum256([]byte(id))
		rels[i] = &Release{PackageID: id, Version: "1.0.0", Kind: "plugin", SHA256: hex.EncodeToString(sum[:]), Size: 1,
			Manifest: []byte("id: " + id + "\n"), PublishedBy: "test", Card: &Card{Kind: "plugin", Name: "Name " + id}}
	}
	if err := s.InsertReleases(ctx, rels, func(r *Release) AuditEntry {
		return AuditEntry{Actor: "test", Action: "publish", Target: r.PackageID + "@" + r.Version, Outcome: "ok"}
	}); err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 3} {
		rows, err := s.r.QueryContext(ctx, "SELECT "+rowCols+" FROM releases ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeReleases(rows, workers)
		rows.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("%d workers: %d releases, want %d", workers, len(got), n)
		}
		for i, r := range got {
			if i > 0 && r.ID <= got[i-1].ID {
				t.Fatalf("%d workers: release %d (id %d) after id %d: not in id order", workers, i, r.ID, got[i-1].ID)
			}
			if r.Card == nil || r.Card.Name != "Name "+r.PackageID {
				t.Fatalf("%d workers: %s has card %+v", workers, r.PackageID, r.Card)
			}
		}
	}
	all, err := s.AllReleases(ctx)
	if err != nil || len(all) != n {
		t.Fatalf("AllReleases: %d releases, %v; want %d", len(all), err, n)
	}
	// Damage the cards of a row in the second batch and one in the third.
	first, second := all[releaseBatch+5], all[2*releaseBatch+1]
	for _, r := range []*Release{second, first} {
		if _, err := s.w.ExecContext(ctx, `UPDATE releases SET card = '{"kind": 5}' WHERE id = ?`, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		_, err := s.AllReleases(ctx)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("release %d card", first.ID)) {
			t.Fatalf("AllReleases over damaged cards: %v, want the error of release %d", err, first.ID)
		}
	}
}

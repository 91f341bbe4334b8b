package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/pluginyard/registry/store"
)

// racers is how many writers race for one id@version: more than a pool's connections, so
// some of them wait for the others on every backend.
const racers = 16

// testReleaseOneWinner: writers racing to insert one id@version with different bytes
// give exactly one winner; every other sees ErrConflict with the winner's release, and
// the store holds the winner's bytes with one audit entry, one serial bump and one
// change. Racing with the same bytes also gives one row.
func testReleaseOneWinner(t *testing.T, b Backend) {
	ctx := context.Background()
	rels := make([]*store.Release, racers)
	got := make([]*store.Release, racers)
	errs := race(racers, func(i int) error {
		rels[i] = newRelease("acme", "1.0.0", fmt.Appendf(nil, "bytes of writer %d", i))
		var err error
		got[i], err = b.InsertRelease(ctx, rels[i], publishAudit("acme", "1.0.0"))
		return err
	})
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both inserted acme@1.0.0", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("writer %d: %v, want nil or ErrConflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("no writer inserted acme@1.0.0: %v", errs)
	}
	want := rels[winner].SHA256
	for i, err := range errs {
		if errors.Is(err, store.ErrConflict) && (got[i] == nil || got[i].SHA256 != want) {
			t.Errorf("writer %d lost and was shown %+v, want the winner's release (sha256 %s)", i, got[i], want)
		}
	}
	stored, err := b.Release(ctx, "acme", "1.0.0")
	if err != nil || stored.SHA256 != want {
		t.Fatalf("stored acme@1.0.0 = %+v, %v; want the winner's sha256 %s", stored, err, want)
	}
	if s := snapshot(t, b); s.Serial != 1 || s.Changes != 1 || s.Audit != 1 || len(s.Releases) != 1 {
		t.Errorf("after the race: %+v, want serial 1, one change, one audit entry, one release", s)
	}
	sameBytesRace(t, b)
}

// sameBytesRace: writers racing with identical bytes give one row, and every loser is
// shown it.
func sameBytesRace(t *testing.T, b Backend) {
	ctx := context.Background()
	data := []byte("identical bytes")
	got := make([]*store.Release, racers)
	errs := race(racers, func(i int) error {
		var err error
		got[i], err = b.InsertRelease(ctx, newRelease("acme", "2.0.0", data), publishAudit("acme", "2.0.0"))
		return err
	})
	wins := 0
	for i, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("same-bytes writer %d: %v, want nil or ErrConflict", i, err)
		case got[i] == nil || got[i].SHA256 != sha(data):
			t.Errorf("same-bytes writer %d was shown %+v, want the release of those bytes", i, got[i])
		}
	}
	if wins != 1 {
		t.Errorf("%d writers of identical bytes inserted acme@2.0.0, want 1", wins)
	}
	if s := snapshot(t, b); s.Serial != 2 || len(s.Releases) != 2 {
		t.Errorf("after the same-bytes race: %+v, want serial 2 and two releases", s)
	}
}

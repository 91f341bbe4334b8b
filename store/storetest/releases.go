package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/store"
)

// readOmits are the fields a read of releases leaves out (pages load them one release at
// a time) and IconSize, recorded on the icon's blob row only.
var readOmits = cmpopts.IgnoreFields(store.Release{}, "Manifest", "README", "READMEHTML",
	"Changelog", "ChangelogHTML", "NotesHTML", "IconSize")

// testReleaseRoundTrip: a release reads back as it was inserted, its manifest and README
// HTML on request; a package's releases come newest first; a missing one is ErrNotFound.
func testReleaseRoundTrip(t *testing.T, b Backend) {
	ctx := context.Background()
	rel := newRelease("acme", "1.0.0", []byte("package bytes"))
	rel.IconSHA256, rel.IconExt, rel.IconType, rel.IconSize = sha([]byte("icon")), "png", "image/png", 4
	rel.Warnings = problem.List{{Rule: "lint.example", Path: "name", Message: "a warning", Severity: problem.Warning}}
	rel.Signature = json.RawMessage(`{"type":"sigstore","san":"https://github.com/acme/acme/.github/workflows/release.yml@refs/tags/v1.0.0"}`)
	rel.Card = &store.Card{Kind: "plugin", Name: "Acme", Description: "Does things", Categories: []string{"tools"}}
	if err := rel.SetREADME([]byte("# Acme\n\nHello.\n")); err != nil {
		t.Fatal(err)
	}
	saved, err := b.InsertRelease(ctx, rel, publishAudit("acme", "1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if saved.ID == 0 || saved.CreatedAt.IsZero() {
		t.Errorf("InsertRelease gave id %d, created %v: want both set", saved.ID, saved.CreatedAt)
	}
	got, err := b.Release(ctx, "acme", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(saved, got, readOmits, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Release (-inserted +read):\n%s", diff)
	}
	if err := b.FillManifests(ctx, []*store.Release{got}); err != nil {
		t.Fatal(err)
	}
	if string(got.Manifest) != string(rel.Manifest) {
		t.Errorf("FillManifests: manifest %q, want %q", got.Manifest, rel.Manifest)
	}
	html, err := b.READMEHTML(ctx, got.ID)
	if err != nil || len(html) == 0 || string(html) != string(rel.READMEHTML) {
		t.Errorf("READMEHTML = %q, %v; want %q", html, err, rel.READMEHTML)
	}
	mustPublish(t, b, "acme", "1.1.0", []byte("newer bytes"))
	rels, err := b.Releases(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"1.1.0", "1.0.0"}, versions(rels)); diff != "" {
		t.Errorf("Releases, newest first (-want +got):\n%s", diff)
	}
	for _, q := range [][2]string{{"acme", "9.9.9"}, {"missing", "1.0.0"}} {
		if _, err := b.Release(ctx, q[0], q[1]); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Release(%s@%s) = %v, want ErrNotFound", q[0], q[1], err)
		}
	}
}

func versions(rels []*store.Release) []string {
	var out []string
	for _, r := range rels {
		out = append(out, r.Version)
	}
	return out
}

// testReleaseImmutable: a second insert of id@version with other bytes is ErrConflict
// with the release already there, and changes nothing.
func testReleaseImmutable(t *testing.T, b Backend) {
	ctx := context.Background()
	first := mustPublish(t, b, "acme", "1.0.0", []byte("first bytes"))
	before := snapshot(t, b)
	old, err := b.InsertRelease(ctx, newRelease("acme", "1.0.0", []byte("other bytes")), publishAudit("acme", "1.0.0"))
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("insert of acme@1.0.0 with other bytes: %v, want ErrConflict", err)
	}
	if old == nil || old.ID != first.ID || old.SHA256 != first.SHA256 {
		t.Errorf("the conflict returned %+v, want the first release (id %d, sha256 %s)", old, first.ID, first.SHA256)
	}
	if diff := cmp.Diff(before, snapshot(t, b)); diff != "" {
		t.Errorf("a refused insert changed the store (-before +after):\n%s", diff)
	}
}

// testReleaseIdempotent: inserting the same bytes again answers ErrConflict with the
// release already there (ingest answers the publisher with it) and records nothing: no
// second row, audit entry, serial bump or change.
func testReleaseIdempotent(t *testing.T, b Backend) {
	ctx := context.Background()
	data := []byte("same bytes")
	first := mustPublish(t, b, "acme", "1.0.0", data)
	before := snapshot(t, b)
	again, err := b.InsertRelease(ctx, newRelease("acme", "1.0.0", data), publishAudit("acme", "1.0.0"))
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second insert of the same bytes: %v, want ErrConflict with the existing release", err)
	}
	if diff := cmp.Diff(first, again, readOmits, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("second insert of the same bytes returned (-first +returned):\n%s", diff)
	}
	if diff := cmp.Diff(before, snapshot(t, b)); diff != "" {
		t.Errorf("a repeated insert changed the store (-before +after):\n%s", diff)
	}
}

// state is what a write may change, compared before and after one that must not.
type state struct {
	Serial   int64
	Changes  int
	Audit    int
	Releases []string // "version sha256 yanked"
}

func snapshot(tb testing.TB, b Backend) state {
	tb.Helper()
	rels, err := b.Releases(context.Background(), "acme")
	if err != nil {
		tb.Fatal(err)
	}
	st := state{Serial: mustSerial(tb, b), Changes: len(allChanges(tb, b).Changes), Audit: len(auditLog(tb, b))}
	for _, r := range rels {
		y := "live"
		if r.Yanked {
			y = "yanked"
		}
		st.Releases = append(st.Releases, r.Version+" "+r.SHA256+" "+y)
	}
	return st
}

package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/plist"
	"github.com/pluginyard/registry/store"
)

var acmeOwner = Actor{Name: "publisher:acme", Publisher: "acme"}

func TestArchiveWhoMay(t *testing.T) {
	ctx := context.Background()
	s := newPublishService(t, publishList(), Config{})
	publishOK(t, s, "acme-hello", "1.0.0", "first")
	tests := []struct {
		name string
		a    Actor
		id   string
		want error
	}{
		{"another publisher", Actor{Name: "publisher:mallory", Publisher: "mallory"}, "acme-hello", ErrForbidden},
		{"an unlisted id", anAdmin, "nobody", ErrNotFound},
		{"a listed id with no release", anAdmin, "acme-other", ErrNotFound},
		{"an owner", acmeOwner, "acme-hello", nil},
		{"an admin", anAdmin, "acme-hello", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Archive(ctx, tt.a, tt.id, true)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("Archive = %v, want %v", err, tt.want)
			}
		})
	}
}

// Archiving: the package stays in the index with "archived": true and installable, its
// document says since when, the feed and the audit log record it; a publish is refused
// with publish.archived (409) until it is unarchived; identical bytes stay idempotent.
func TestArchiveThenPublish(t *testing.T) {
	ctx := context.Background()
	s := newPublishService(t, publishList(), Config{})
	publishOK(t, s, "acme-hello", "1.0.0", "first")
	serial, _ := s.store.Serial(ctx)
	res, err := s.Archive(ctx, acmeOwner, "acme-hello", true)
	if err != nil || !res.Archived || !res.Changed || res.Since == nil {
		t.Fatalf("Archive = %+v, %v", res, err)
	}
	if indexed(s, "acme-hello") != "1.0.0" || !bytes.Contains(s.Documents().Kandev.Body.Bytes(), []byte(`"archived":true`)) {
		t.Fatalf("the archived package left the index or lacks \"archived\": true")
	}
	doc, err := s.packageIndex(ctx, "acme-hello", false)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc.Body, []byte(`"archived_at":"`)) {
		t.Errorf("package document has no archived_at: %s", doc.Body)
	}
	page, err := s.store.Changes(ctx, serial, 10)
	if err != nil || len(page.Changes) != 1 || page.Changes[0].Kind != store.ChangeArchive {
		t.Errorf("changes after archiving = %+v, %v; want one archive", page, err)
	}
	if again, err := s.Archive(ctx, acmeOwner, "acme-hello", true); err != nil || again.Changed || !again.Since.Equal(*res.Since) {
		t.Errorf("archiving again = %+v, %v; want no change, the first date kept", again, err)
	}

	_, err = s.Publish(ctx, PublishInput{Package: bytes.NewReader(plugin(t, "acme-hello", "1.1.0", "second")),
		FileName: PackageFileName("acme-hello", "1.1.0"), Actor: acmeOwner})
	if !errors.Is(err, ErrConflict) || ruleOf(err) != "publish.archived" {
		t.Fatalf("publish to an archived package: %v (rule %q), want ErrConflict with publish.archived", err, ruleOf(err))
	}
	if msg := err.Error(); !strings.Contains(msg, "registry unarchive acme-hello") || !strings.Contains(msg, "acme-hello@1.1.0") {
		t.Errorf("refusal %q does not name the release and the fix", msg)
	}
	if r := publishOK(t, s, "acme-hello", "1.0.0", "first"); r.Created {
		t.Errorf("identical bytes re-published as a new release")
	}

	if res, err := s.Archive(ctx, acmeOwner, "acme-hello", false); err != nil || res.Archived || !res.Changed {
		t.Fatalf("Unarchive = %+v, %v", res, err)
	}
	if bytes.Contains(s.Documents().Kandev.Body.Bytes(), []byte(`"archived"`)) {
		t.Errorf("the unarchived package still says archived")
	}
	publishOK(t, s, "acme-hello", "1.1.0", "second")
	entries, err := s.db().AuditLog(ctx, 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range entries {
		if e.Target == "acme-hello" && (e.Action == "archive" || e.Action == "unarchive") {
			actions = append(actions, e.Actor+" "+e.Action)
		}
	}
	slices.Reverse(actions) // the log is newest first
	if diff := cmp.Diff([]string{"publisher:acme archive", "publisher:acme unarchive"}, actions); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
}

// Listings put archived packages after every active one, in each order, whether the views
// are built or derived from the previous catalogue's.
func TestViewsListArchivedLast(t *testing.T) {
	at := time.Unix(1e9, 0)
	mk := func(id string, downloads int64, age time.Duration, archived bool) *Item {
		it := &Item{ID: id, Kind: "plugin", Downloads: downloads, UpdatedAt: at.Add(-age), Package: &store.Package{ID: id}}
		if archived {
			it.Package.ArchivedAt = &at
		}
		return it
	}
	// "aaa" would come first in every order were it active.
	prev := []*Item{mk("aaa", 100, 0, false), mk("bbb", 5, time.Hour, false), mk("ccc", 1, 2*time.Hour, false)}
	next := []*Item{mk("aaa", 100, 0, true), prev[1], prev[2]}
	derived := deriveViews(plist.Of(prev), buildViews(prev), plist.Of(next))
	if derived == nil {
		t.Fatal("views not derived for a one-item change")
	}
	for name, v := range map[string]*Views{"built": buildViews(next), "derived": derived} {
		for _, sort := range []string{SortName, SortDownloads, SortRecent} {
			items, _ := v.List("", "", sort, 0, 10)
			if got := idsOf(items); !slices.Equal(got, []string{"bbb", "ccc", "aaa"}) {
				t.Errorf("%s views, %s: %v, want the archived aaa last", name, sort, got)
			}
		}
	}
}

func TestArchiveResultJSON(t *testing.T) {
	at := time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC)
	b, err := json.Marshal(ArchiveResult{ID: "acme-hello", Archived: true, Since: &at, Changed: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"acme-hello","archived":true,"archived_at":"2026-12-01T13:00:00Z","changed":true}`; string(b) != want {
		t.Errorf("JSON = %s, want %s", b, want)
	}
}

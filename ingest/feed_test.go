package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
)

// TestExportedPackageDocuments: the export holds the listing and one document per listed
// package, each naming its releases with the digests the store records.
func TestExportedPackageDocuments(t *testing.T) {
	svc := mustExportService(t, "hello-managed", "pr-insights", "curupira-github-issues", "task-board-canvas")
	lst, err := svc.Listing(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range lst.Packages {
		ids = append(ids, p.ID)
		if p.URL != "https://mirror.example/api/v1/index/"+p.ID+".json" {
			t.Errorf("%s: url %s", p.ID, p.URL)
		}
	}
	if diff := cmp.Diff([]string{"curupira-github-issues", "hello-managed", "pr-insights", "task-board-canvas"}, ids); diff != "" || lst.Serial != 4 || lst.CompleteSince != 0 {
		t.Errorf("listing at serial %d (complete since %d), ids (-want +got):\n%s", lst.Serial, lst.CompleteSince, diff)
	}
	rels, err := svc.store.AllReleases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rels {
		pi, err := svc.PackageIndexByFile(context.Background(), FileID(r.PackageID))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			ID       string
			Releases []ReleaseLine
			State    PackageState
		}
		if err := json.Unmarshal(pi.Body, &doc); err != nil {
			t.Fatalf("%s: %v\n%s", r.PackageID, err, pi.Body)
		}
		want := []ReleaseLine{{Version: r.Version, Kind: r.Kind, PackageURL: svc.PackageURL(r.PackageID, r.Version), PackageSHA256: r.SHA256,
			Size: r.Size, PublishedAt: r.CreatedAt, APIVersion: r.Card.APIVersion, MinKandevVersion: r.Card.MinKandevVersion, Platforms: r.Card.Platforms,
			ProtocolVersion: r.Card.ProtocolVersion}}
		if diff := cmp.Diff(want, doc.Releases); diff != "" || doc.ID != r.PackageID || len(doc.State.Yanked) != 0 || doc.State.Deprecated != nil {
			t.Errorf("%s (-want +got):\n%s\nstate %+v", r.PackageID, diff, doc.State)
		}
		if r.Card == nil || (r.Kind == "extension") != (r.Card.APIVersion == 0) || (r.Kind == "extension") != (r.Card.ProtocolVersion != 0) {
			t.Errorf("%s: card %+v: want an api_version for a plugin or canvas, a protocol_version for an extension", r.PackageID, r.Card)
		}
	}
}

// TestStaticFeedPages pages the feed by 2 serials: every page from the one holding the change
// after complete_since to the one holding the change after the serial, each with its
// changes and a link to the next.
func TestStaticFeedPages(t *testing.T) {
	tests := []struct {
		name             string
		serial, complete int64
		want             []string // "since: serials -> next"
	}{
		{"no change yet", 0, 0, []string{"0: [] -> -"}},
		{"a partial last page", 5, 0, []string{"0: [1 2] -> 2", "2: [3 4] -> 4", "4: [5] -> -"}},
		{"an exact last page", 4, 0, []string{"0: [1 2] -> 2", "2: [3 4] -> 4", "4: [] -> -"}},
		{"complete since 3", 5, 3, []string{"2: [4] -> 4", "4: [5] -> -"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := mustExportService(t)
			ctx := context.Background()
			for range tt.serial {
				if err := svc.store.BumpSerial(ctx); err != nil {
					t.Fatal(err)
				}
			}
			out := map[string][]byte{}
			if err := svc.staticFeed(ctx, tt.serial, tt.complete, 2, out); err != nil {
				t.Fatal(err)
			}
			var got []string
			for since := int64(0); since <= tt.serial; since += 2 {
				body, ok := out[StaticFeedPath(since)]
				if !ok {
					continue
				}
				delete(out, StaticFeedPath(since))
				var p FeedPage
				if err := json.Unmarshal(body, &p); err != nil {
					t.Fatal(err)
				}
				var serials []string
				for _, c := range p.Changes {
					serials = append(serials, fmt.Sprint(c.Serial))
				}
				next := "-"
				if p.Next != nil {
					next = strings.TrimPrefix(*p.Next, "https://mirror.example/api/v1/changes/")
					next = strings.TrimSuffix(next, ".json")
				}
				if p.Serial != tt.serial || p.CompleteSince != tt.complete || p.Since != since {
					t.Errorf("page %d says serial %d, complete since %d, since %d", since, p.Serial, p.CompleteSince, p.Since)
				}
				got = append(got, fmt.Sprintf("%d: [%s] -> %s", since, strings.Join(serials, " "), next))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" || len(out) > 0 {
				t.Errorf("pages (-want +got):\n%s\nother files: %v", diff, out)
			}
		})
	}
}

// TestListingPairsEntriesWithTheirKind: a plugin entry whose id only an extension was
// published under has no document and is not listed (as listedItemsOf pairs them).
func TestListingPairsEntriesWithTheirKind(t *testing.T) {
	svc := mustExportService(t, "curupira-github-issues", "hello-managed")
	ctx := context.Background()
	l, probs := index.ParseList([]byte("plugins:\n  - id: curupira-github-issues\n    repo: pluginyard/registry\n  - id: hello-managed\n    repo: pluginyard/registry\n"))
	if l == nil || probs.HasErrors() {
		t.Fatal(probs)
	}
	if err := svc.SetList(ctx, l, "test"); err != nil {
		t.Fatal(err)
	}
	lst, err := svc.Listing(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(lst.Packages) != 1 || lst.Packages[0].ID != "hello-managed" {
		t.Errorf("listing %+v, want hello-managed alone", lst.Packages)
	}
	if _, err := svc.PackageIndexByFile(ctx, "curupira-github-issues"); !errors.Is(err, ErrNotFound) {
		t.Errorf("document of a plugin entry with only an extension release: %v, want ErrNotFound", err)
	}
}

package storetest

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pluginyard/registry/store"
)

// UnusedBlobPlanter is what the harness of a Backend adds for testBlobUses: a blob row no
// release or preview uses, which no method makes any more (data of earlier versions).
type UnusedBlobPlanter interface {
	PlantUnusedBlob(ctx context.Context, sha string, size int64) error
}

// testBlobUses: the blobs a start stats (RecordedBlobs) are every blob BlobRecords gives,
// in sha256 order, with its size: those with uses (package, icon and preview copy alike)
// and a blob nothing uses.
func testBlobUses(t *testing.T, b Backend) {
	ctx := context.Background()
	shared := []byte("shared package bytes")
	mustPublish(t, b, "blob-y", "1.0.0", shared) // published first, listed after blob-a's use
	a := newRelease("blob-a", "1.0.0", shared)
	icon := []byte("icon bytes")
	a.IconSHA256, a.IconExt, a.IconType, a.IconSize = sha(icon), "png", "image/png", int64(len(icon))
	if _, err := b.InsertRelease(ctx, a, publishAudit("blob-a", "1.0.0")); err != nil {
		t.Fatal(err)
	}
	mustPublish(t, b, "blob-b", "1.0.0", shared) // the same bytes: one blob, three uses
	mustPublish(t, b, "blob-b", "1.1.0", []byte("b 1.1.0"))
	const url = "https://example.com/preview.png"
	if _, err := b.RecordPreviewFetched(ctx, url, sha([]byte("preview")), "image/png", 7); err != nil {
		t.Fatal(err)
	}
	// A second copy of a URL that has one is not recorded (RecordPreviewFetched); a blob
	// row nothing uses, as earlier versions left for it, is planted.
	if _, err := b.RecordPreviewFetched(ctx, url, sha([]byte("a later copy")), "image/png", 12); err != nil {
		t.Fatal(err)
	}
	planter, ok := b.(UnusedBlobPlanter)
	if !ok {
		t.Fatalf("%T cannot plant a blob row nothing uses (UnusedBlobPlanter): the suite needs one", b)
	}
	unused := sha([]byte("an unused blob"))
	if err := planter.PlantUnusedBlob(ctx, unused, 14); err != nil {
		t.Fatal(err)
	}

	recs, err := b.BlobRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var want []store.BlobRecord
	used, sawUnused := 0, false
	for _, r := range recs {
		if r.SHA256 == unused {
			sawUnused = len(r.Uses) == 0
		}
		if len(r.Uses) > 0 {
			used++
		}
		want = append(want, store.BlobRecord{SHA256: r.SHA256, Size: r.Size})
	}
	if !sawUnused || used != 4 || len(want) != 5 {
		t.Fatalf("fixture: BlobRecords %+v (want 4 used blobs and the unused one)", recs)
	}
	slices.SortFunc(want, func(a, b store.BlobRecord) int { return strings.Compare(a.SHA256, b.SHA256) })
	got, err := b.RecordedBlobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RecordedBlobs:\n got %+v\nwant %+v", got, want)
	}
	// BlobUsesOf gives the named blobs BlobRecords' uses, none to the unused one or a digest
	// not recorded, whether it looks them up by name or (past 256 names) reads every use.
	wantUses := map[string][]store.BlobUse{}
	var named []string
	for _, r := range recs {
		named = append(named, r.SHA256)
		if len(r.Uses) > 0 {
			wantUses[r.SHA256] = r.Uses
		}
	}
	named = append(named, sha([]byte("not recorded")))
	// Past 256 names, every use is read and only the named blobs' kept: leave one used blob
	// out of the names.
	var left string
	for sha := range wantUses {
		left = sha
		break
	}
	many := slices.DeleteFunc(slices.Clone(named), func(s string) bool { return s == left })
	for i := 0; len(many) <= 300; i++ {
		many = append(many, sha([]byte(fmt.Sprint("filler ", i))))
	}
	first := named[:1]
	for _, tc := range []struct {
		shas []string
		want map[string][]store.BlobUse
	}{
		{named, wantUses},
		{many, maps.Collect(func(yield func(string, []store.BlobUse) bool) {
			for sha, u := range wantUses {
				if sha != left && !yield(sha, u) {
					return
				}
			}
		})},
		{first, maps.Collect(func(yield func(string, []store.BlobUse) bool) {
			if u, ok := wantUses[first[0]]; ok {
				yield(first[0], u)
			}
		})},
	} {
		got, err := b.BlobUsesOf(ctx, tc.shas)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("BlobUsesOf(%d digests):\n got %+v\nwant %+v", len(tc.shas), got, tc.want)
		}
	}
}

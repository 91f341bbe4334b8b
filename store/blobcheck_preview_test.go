package store_test

import (
	"context"
	"testing"
)

// TestPreviewCopiesAreNotOrphans: a copied preview image is a used blob, so fsck does not
// report it (nor exit 1) as an orphan.
func TestPreviewCopiesAreNotOrphans(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	img := []byte("\x89PNG\r\n\x1a\n not really, but the store does not sniff")
	sha, err := s.Blobs.Put(img)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordPreviewFetched(ctx, "https://raw.githubusercontent.com/acme/x/main/cover.png", sha, "image/png", int64(len(img))); err != nil {
		t.Fatal(err)
	}
	probs, err := s.CheckBlobs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(probs) != 0 {
		t.Errorf("CheckBlobs: %+v, want no problem for a preview copy", probs)
	}
}

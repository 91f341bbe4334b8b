package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

const previewURL = "https://raw.githubusercontent.com/acme/board/v1/docs/cover.png"

// TestPreviewRecords: failures count attempts and say why; a copy clears the error; once
// there is a copy, neither a failure nor another copy replaces it (fetched once).
func TestPreviewRecords(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	first, second := twoCopies(t, s)
	steps := []struct {
		name string
		do   func() (*store.Preview, error)
		want store.Preview
	}{
		{"failure", func() (*store.Preview, error) {
			return s.RecordPreviewFailed(ctx, previewURL, "preview.status", "answered 503")
		},
			store.Preview{URL: previewURL, Attempts: 1, Rule: "preview.status", Error: "answered 503"}},
		{"second failure", func() (*store.Preview, error) {
			return s.RecordPreviewFailed(ctx, previewURL, "preview.fetch", "timeout")
		},
			store.Preview{URL: previewURL, Attempts: 2, Rule: "preview.fetch", Error: "timeout"}},
		{"copy", func() (*store.Preview, error) { return s.RecordPreviewFetched(ctx, previewURL, first, "image/png", 13) },
			store.Preview{URL: previewURL, SHA256: first, ContentType: "image/png", Size: 13, Attempts: 3}},
		{"failure after the copy", func() (*store.Preview, error) {
			return s.RecordPreviewFailed(ctx, previewURL, "preview.fetch", "timeout")
		},
			store.Preview{URL: previewURL, SHA256: first, ContentType: "image/png", Size: 13, Attempts: 3}},
		{"another copy", func() (*store.Preview, error) {
			return s.RecordPreviewFetched(ctx, previewURL, second, "image/png", 14)
		},
			store.Preview{URL: previewURL, SHA256: first, ContentType: "image/png", Size: 13, Attempts: 3}},
	}
	for _, st := range steps {
		got, err := st.do()
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if diff := cmp.Diff(&st.want, got, ignoreTimes); diff != "" {
			t.Errorf("%s (-want +got):\n%s", st.name, diff)
		}
		if got.Fetched() && got.FetchedAt.IsZero() || got.AttemptedAt.IsZero() {
			t.Errorf("%s: times not recorded: %+v", st.name, got)
		}
	}
	all, err := s.Previews(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[previewURL] == nil || all[previewURL].SHA256 != first {
		t.Errorf("Previews = %+v, want the one copy", all)
	}
}

// twoCopies stores two preview files (13 and 14 bytes), recorded nowhere yet.
func twoCopies(t *testing.T, s *store.Store) (first, second string) {
	t.Helper()
	var err error
	if first, err = s.Blobs.Put([]byte("\x89PNG\r\n\x1a\nfirst")); err != nil {
		t.Fatal(err)
	}
	if second, err = s.Blobs.Put([]byte("\x89PNG\r\n\x1a\nsecond")); err != nil {
		t.Fatal(err)
	}
	return first, second
}

var ignoreTimes = cmp.FilterPath(func(p cmp.Path) bool {
	n := p.Last().String()
	return n == ".FetchedAt" || n == ".AttemptedAt"
}, cmp.Ignore())

// TestPreviewBlobSurvivesGarbageCollection: a copy's blob has its row, so the start-up
// collection that removes unrecorded blob files keeps it.
func TestPreviewBlobSurvivesGarbageCollection(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	data := []byte("\x89PNG\r\n\x1a\ncover")
	sha, err := s.Blobs.Put(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordPreviewFetched(ctx, previewURL, sha, "image/png", int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CollectGarbage(ctx); err != nil || n != 0 {
		t.Fatalf("CollectGarbage removed %d, %v; want 0", n, err)
	}
	if size, err := s.BlobSize(ctx, sha); err != nil || size != int64(len(data)) {
		t.Errorf("blob row: %d %v", size, err)
	}
	if _, err := s.Blobs.ReadAll(sha); err != nil {
		t.Errorf("blob file gone: %v", err)
	}
}

// TestPreviewRecordLimits: the schema refuses a type pages do not serve, and a long error
// is cut to 1024 bytes on a character boundary.
func TestPreviewRecordLimits(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	sha, err := s.Blobs.Put([]byte("GIF89a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordPreviewFetched(ctx, previewURL, sha, "image/gif", 6); err == nil {
		t.Errorf("a GIF copy was recorded; the schema allows PNG, JPEG and WebP only")
	}
	p, err := s.RecordPreviewFailed(ctx, previewURL, "preview.fetch", strings.Repeat("é", 600))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Error) > 1024 || len(p.Error) < 1022 || !utf8.ValidString(p.Error) {
		t.Errorf("error of %d bytes (valid UTF-8: %v), want at most 1024, cut on a character", len(p.Error), utf8.ValidString(p.Error))
	}
}

// TestPreviewKeptCopyRecordsNoOtherBlob: a copy fetched for a URL that keeps its earlier
// one leaves no recorded blob that nothing uses (which nothing would remove): its file is
// an unrecorded orphan, for the start-up sweep. A blob some other row records keeps its
// row.
func TestPreviewKeptCopyRecordsNoOtherBlob(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	first, second := twoCopies(t, s)
	for _, sha := range []string{first, second} {
		if _, err := s.RecordPreviewFetched(ctx, previewURL, sha, "image/png", 13); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.BlobSize(ctx, second); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the copy the URL did not take: BlobSize = %v, want no row", err)
	}
	probs, err := s.CheckBlobs(ctx, nil)
	if err != nil || len(probs) != 1 || probs[0].SHA256 != second || probs[0].Kind != store.BlobOrphan || probs[0].Recorded {
		t.Errorf("CheckBlobs = %+v, %v; want %s as an unrecorded orphan", probs, err, second)
	}
	// second is then another URL's copy: the first URL's refusal of it keeps its row.
	other := previewURL + "?v=2"
	if _, err := s.RecordPreviewFetched(ctx, other, second, "image/png", 14); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordPreviewFetched(ctx, previewURL, second, "image/png", 14); err != nil {
		t.Fatalf("a copy of a blob another URL records, for a URL that keeps its own: %v", err)
	}
	if got, err := s.BlobSize(ctx, second); err != nil || got != 14 {
		t.Errorf("BlobSize(%s) = %d, %v; want the other URL's row kept", second, got, err)
	}
	if probs, err := s.CheckBlobs(ctx, nil); err != nil || len(probs) != 0 {
		t.Errorf("CheckBlobs = %+v, %v; want none", probs, err)
	}
}

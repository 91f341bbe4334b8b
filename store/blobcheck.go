package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
)

// Kinds of BlobProblem.
const (
	BlobMissing    = "missing"    // the database records the blob; its file is absent
	BlobCorrupt    = "corrupt"    // the file's size or sha256 is not the recorded one
	BlobUnreadable = "unreadable" // the file exists but cannot be read (permissions, I/O)
	BlobOrphan     = "orphan"     // a blob file no release uses
)

// BlobUse is one release that needs a blob, as its package or as its icon.
type BlobUse struct {
	PackageID string `json:"package_id"`
	Version   string `json:"version"`
	Role      string `json:"role"` // package | icon | preview (PackageID is then the image's URL)
}

// String is "id@version (role)".
func (u BlobUse) String() string {
	if u.Role == "preview" {
		return "preview " + u.PackageID
	}
	return u.PackageID + "@" + u.Version + " (" + u.Role + ")"
}

// BlobRecord is a blob the database records, with its size and the releases that use it.
type BlobRecord struct {
	SHA256 string
	Size   int64
	Uses   []BlobUse
}

// BlobProblem is one blob that fails CheckBlobs.
type BlobProblem struct {
	Kind   string    `json:"kind"` // BlobMissing, BlobCorrupt, BlobUnreadable or BlobOrphan
	SHA256 string    `json:"sha256"`
	Size   int64     `json:"size"` // the recorded size; for a file the database lacks, the file's
	Uses   []BlobUse `json:"releases"`
	Detail string    `json:"detail"`
	// Recorded is set on an orphan the database records but nothing uses (a second copy
	// of a preview, which RecordPreviewFetched recorded before it dropped such rows); an
	// orphan without it is a file the database does not know (an interrupted publish, a
	// copy not taken), which serve's start-up sweep removes.
	Recorded bool `json:"recorded,omitempty"`
}

// BlobProgress is reported after each blob CheckBlobs has checked.
type BlobProgress struct {
	Done, Total       int
	Bytes, TotalBytes int64
	SHA256            string
}

// BlobCount returns how many blobs the database records.
func (s *Store) BlobCount(ctx context.Context) (int, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM blobs").Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count blobs: %w", err)
	}
	return n, nil
}

// BlobRecords returns every blob the database records, ordered by sha256, each with the
// releases that use it. A scrubber walks these and calls Blobs.Check at its own pace.
func (s *Store) BlobRecords(ctx context.Context) ([]BlobRecord, error) {
	uses, err := s.blobUses(ctx)
	if err != nil {
		return nil, err
	}
	recs, err := s.RecordedBlobs(ctx)
	for i := range recs {
		recs[i].Uses = uses[recs[i].SHA256]
	}
	return recs, err
}

// RecordedBlobs returns every blob the database records, ordered by sha256, each without
// its uses (BlobRecords has them): what a start stats. It is one scan of the blobs table;
// telling used blobs from unused ones (a second copy of a preview, recorded by earlier versions) costs a
// distinct set over every use, several times the scan at 50k releases, and is needed only
// for a blob found damaged (BlobUsesOf).
func (s *Store) RecordedBlobs(ctx context.Context) ([]BlobRecord, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT sha256, size FROM blobs ORDER BY sha256")
	if err != nil {
		return nil, fmt.Errorf("store: recorded blobs: %w", err)
	}
	defer rows.Close()
	var out []BlobRecord
	for rows.Next() {
		var r BlobRecord
		if err := rows.Scan(&r.SHA256, &r.Size); err != nil {
			return nil, fmt.Errorf("store: recorded blobs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: recorded blobs: %w", err)
	}
	return out, nil
}

func (s *Store) blobUses(ctx context.Context) (map[string][]BlobUse, error) {
	return s.usesOf(ctx, nil)
}

// blobUsesOfMax is the most digests BlobUsesOf looks up by name; more read every use.
const blobUsesOfMax = 256

// BlobUsesOf returns the uses of the blobs shas (those BlobRecords would give them), by
// sha256; a blob nothing uses has none. A start that finds a few blobs damaged asks for
// theirs alone, rather than reading every use of every blob (BlobRecords).
func (s *Store) BlobUsesOf(ctx context.Context, shas []string) (map[string][]BlobUse, error) {
	if len(shas) == 0 {
		return map[string][]BlobUse{}, nil
	}
	uses, err := s.usesOf(ctx, shas)
	if err != nil || len(shas) <= blobUsesOfMax {
		return uses, err
	}
	want := make(map[string]bool, len(shas))
	for _, sha := range shas {
		want[sha] = true
	}
	maps.DeleteFunc(uses, func(sha string, _ []BlobUse) bool { return !want[sha] })
	return uses, nil
}

// usesOf reads the uses of the blobs shas, of every blob for nil or more than
// blobUsesOfMax of them.
func (s *Store) usesOf(ctx context.Context, shas []string) (map[string][]BlobUse, error) {
	pkg, icon, preview := "", " WHERE icon_sha256 IS NOT NULL", " WHERE sha256 IS NOT NULL"
	var args []any
	if len(shas) > 0 && len(shas) <= blobUsesOfMax {
		in := "(" + strings.Repeat("?, ", len(shas)-1) + "?)"
		pkg, icon, preview = " WHERE sha256 IN "+in, " WHERE icon_sha256 IN "+in, " WHERE sha256 IN "+in
		for range 3 {
			for _, sha := range shas {
				args = append(args, sha)
			}
		}
	}
	rows, err := s.r.QueryContext(ctx, `SELECT sha256, package_id, version, 'package' FROM releases`+pkg+`
		UNION ALL SELECT icon_sha256, package_id, version, 'icon' FROM releases`+icon+`
		UNION ALL SELECT sha256, url, '', 'preview' FROM previews`+preview+`
		ORDER BY 2, 3, 4`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: blob uses: %w", err)
	}
	defer rows.Close()
	uses := map[string][]BlobUse{}
	for rows.Next() {
		var sha string
		var u BlobUse
		if err := rows.Scan(&sha, &u.PackageID, &u.Version, &u.Role); err != nil {
			return nil, fmt.Errorf("store: blob uses: %w", err)
		}
		uses[sha] = append(uses[sha], u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: blob uses: %w", err)
	}
	return uses, nil
}

// BlobChecker is a blob store CheckBlobsIn can check: the local folder (Folder) or a
// bucket (s3blob.Store).
type BlobChecker interface {
	Check(ctx context.Context, sha string, size int64) error
	List(ctx context.Context) ([]string, error)
	Info(ctx context.Context, sha string) (BlobInfo, error)
}

// CheckBlobs is CheckBlobsIn over the local blob folder.
func (s *Store) CheckBlobs(ctx context.Context, progress func(BlobProgress)) ([]BlobProblem, error) {
	return s.CheckBlobsIn(ctx, s.Blobs.Folder(), progress)
}

// CheckBlobsIn re-hashes in b every blob the database records against its recorded size
// and sha256, and lists the blobs in b no release uses; progress (may be nil) is called
// after each blob. It returns the problems ordered by sha256 (none: an empty list); an
// error means the check itself could not run: ctx ended or b became unreachable (an error
// wrapping ErrUnavailable, rather than every blob reported unreadable).
func (s *Store) CheckBlobsIn(ctx context.Context, b BlobChecker, progress func(BlobProgress)) ([]BlobProblem, error) {
	recs, err := s.BlobRecords(ctx)
	if err != nil {
		return nil, err
	}
	p := BlobProgress{Total: len(recs)}
	for _, r := range recs {
		p.TotalBytes += r.Size
	}
	probs := []BlobProblem{}
	for _, r := range recs {
		if err := ctx.Err(); err != nil {
			return probs, fmt.Errorf("store: check blobs: %w", err)
		}
		prob, err := checkRecord(ctx, b, r)
		if err != nil {
			return probs, fmt.Errorf("store: check blobs: %w", err)
		}
		if prob != nil {
			probs = append(probs, *prob)
		}
		p.Done, p.Bytes, p.SHA256 = p.Done+1, p.Bytes+r.Size, r.SHA256
		if progress != nil {
			progress(p)
		}
	}
	orphans, err := orphanBlobs(ctx, b, recs)
	if err != nil {
		return probs, err
	}
	probs = append(probs, orphans...)
	sort.SliceStable(probs, func(i, j int) bool { return probs[i].SHA256 < probs[j].SHA256 })
	return probs, nil
}

// checkRecord checks one recorded blob: a used blob must be whole; an unused one is an
// orphan when it is there (and nothing when it is not: nobody needs it). The error is
// b's being unreachable, which is no verdict on the blob.
func checkRecord(ctx context.Context, b BlobChecker, r BlobRecord) (*BlobProblem, error) {
	err := b.Check(ctx, r.SHA256, r.Size)
	if errors.Is(err, ErrUnavailable) || (err != nil && ctx.Err() != nil) {
		return nil, err
	}
	if len(r.Uses) == 0 {
		if errors.Is(err, ErrBlobMissing) {
			return nil, nil
		}
		return &BlobProblem{Kind: BlobOrphan, SHA256: r.SHA256, Size: r.Size, Uses: []BlobUse{}, Recorded: true,
			Detail: "recorded in the database but no release uses it"}, nil
	}
	if err == nil {
		return nil, nil
	}
	kind := BlobUnreadable
	switch {
	case errors.Is(err, ErrBlobMissing):
		kind = BlobMissing
	case errors.Is(err, ErrBlobCorrupt):
		kind = BlobCorrupt
	}
	return &BlobProblem{Kind: kind, SHA256: r.SHA256, Size: r.Size, Uses: r.Uses, Detail: strings.TrimPrefix(err.Error(), "store: ")}, nil
}

// orphanBlobs lists the blobs in b the database does not record at all.
func orphanBlobs(ctx context.Context, b BlobChecker, recs []BlobRecord) ([]BlobProblem, error) {
	files, err := b.List(ctx)
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(recs))
	for _, r := range recs {
		known[r.SHA256] = true
	}
	var out []BlobProblem
	for _, sha := range files {
		if known[sha] {
			continue
		}
		size := int64(-1)
		if info, err := b.Info(ctx, sha); err == nil {
			size = info.Size
		}
		out = append(out, BlobProblem{Kind: BlobOrphan, SHA256: sha, Size: size, Uses: []BlobUse{},
			Detail: "a blob the database does not record (an interrupted publish leaves one; registry serve removes them at start)"})
	}
	return out, nil
}

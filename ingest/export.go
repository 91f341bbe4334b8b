package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ExportProgress is told about each file an export writes.
type ExportProgress func(path string, bytes int64)

// exportFile is one file of a snapshot: its path inside the export and the sha256 its bytes
// must have; index documents must also parse as JSON.
type exportFile struct {
	rel, sha string
	n        int64
	document bool
}

// Export writes a static mirror of the registry into dir: index.json,
// curupira/index.json, their signatures (.sig), the log's checkpoint and tiles (log/), so
// that `registry log verify` audits the mirror as it would the registry, the per-package
// documents, their listing and the change feed's pages (api/v1/, see writeFeedFiles), so
// that tools sync from the mirror as from the registry, every package version (yanked ones
// too, since their exact URLs stay valid) and every listed icon, laid out as the registry
// serves them, so that any static host or CDN can serve dir at the configured public URL.
//
// dir ends up holding exactly this snapshot: it is written into a fresh sibling folder,
// every file is read back and checked (packages and icons against the sha256 the store
// records, index documents as JSON), and only then swapped in for dir. A failed export
// leaves the previous one as it was. A non-empty dir that is not an earlier export (no
// index.json) is refused rather than replaced. When dir is a symlink, the folder it
// points to is replaced and the link stays.
func (s *Service) Export(ctx context.Context, dir string, progress ExportProgress) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("ingest: export: %w", err)
	}
	// A symlink (mirror -> releases/current) is followed: the folder it names is replaced,
	// and the link stays. Progress still names dir, the path the caller gave.
	target, err := filepath.EvalSymlinks(dir)
	if errors.Is(err, fs.ErrNotExist) {
		target, err = dir, nil
	}
	if err != nil {
		return fmt.Errorf("ingest: export: %w", err)
	}
	if err := cleanStale(target); err != nil {
		return err
	}
	if err := replaceable(target); err != nil {
		return err
	}
	if err := s.Rebuild(ctx); err != nil {
		return err
	}
	parent := filepath.Dir(target)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("ingest: export: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(target)+".new-")
	if err != nil {
		return fmt.Errorf("ingest: export: %w", err)
	}
	defer os.RemoveAll(tmp) // gone already once swapped in
	// MkdirTemp makes it 0700: the web server serving the mirror must read it, as every
	// folder inside.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("ingest: export: %w", err)
	}
	files, err := s.writeSnapshot(ctx, tmp)
	if err != nil {
		return err
	}
	if err := verifySnapshot(tmp, files); err != nil {
		return err
	}
	if err := swapDir(tmp, target); err != nil {
		return err
	}
	if progress != nil {
		for _, f := range files {
			progress(filepath.Join(dir, f.rel), f.n)
		}
	}
	return nil
}

// cleanStale removes what an export killed part-way left beside target, which nothing
// else removes: a new tree never swapped in (.BASE.new-*) and a previous export moved aside
// (.BASE.new-*.old). A previous export moved aside while target is absent (a kill between
// swapDir's two renames) is the only copy: it is put back first.
func cleanStale(target string) error {
	parent, prefix := filepath.Dir(target), "."+filepath.Base(target)+".new-"
	ents, err := os.ReadDir(parent)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ingest: export: %w", err)
	}
	var stale []string
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		path := filepath.Join(parent, e.Name())
		if strings.HasSuffix(e.Name(), ".old") {
			if _, err := os.Lstat(target); errors.Is(err, fs.ErrNotExist) {
				if err := os.Rename(path, target); err != nil {
					return fmt.Errorf("ingest: export: put back the previous export %s: %w", path, err)
				}
				continue
			}
		}
		stale = append(stale, path)
	}
	for _, path := range stale {
		if err := os.RemoveAll(path); err != nil {
			return fmt.Errorf("ingest: export: remove %s, left by an interrupted export: %w", path, err)
		}
	}
	return nil
}

// replaceable refuses to replace a file, or a non-empty folder without an index.json,
// which an earlier export would have written: a mistyped --out must not wipe a folder.
func replaceable(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ingest: export: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("ingest: export: %s is a file, not a folder; choose another --out", dir)
	}
	if dir == filepath.Dir(dir) {
		return fmt.Errorf("ingest: export: refusing to replace the root folder %s", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("ingest: export: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "index.json")); len(entries) > 0 && err != nil {
		return fmt.Errorf("ingest: export: %s holds %d entries but no index.json, so it is not an earlier export, "+
			"and an export replaces its folder as a whole; choose an empty or new --out", dir, len(entries))
	}
	return nil
}

// writeSnapshot writes every file of the mirror under root and returns what it wrote.
func (s *Service) writeSnapshot(ctx context.Context, root string) ([]exportFile, error) {
	docs := s.Documents()
	var files []exportFile
	for rel, body := range map[string][]byte{"index.json": docs.Kandev.Body.Bytes(), filepath.Join("curupira", "index.json"): docs.Curupira.Body.Bytes()} {
		if err := writeExportFile(filepath.Join(root, rel), body); err != nil {
			return nil, err
		}
		sum := sha256.Sum256(body)
		files = append(files, exportFile{rel: rel, sha: hex.EncodeToString(sum[:]), n: int64(len(body)), document: true})
	}
	logFiles, err := s.writeLogFiles(ctx, root)
	if err != nil {
		return nil, err
	}
	files = append(files, logFiles...)
	feedFiles, err := s.writeFeedFiles(ctx, root)
	if err != nil {
		return nil, err
	}
	files = append(files, feedFiles...)
	rels, err := s.store.AllReleases(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, r := range rels {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if _, q := s.QuarantineOf(r.PackageID, r.Version); q {
			continue // quarantine.go: a mirror must not serve what the registry answers 410 for
		}
		fid := FileID(r.PackageID)
		blobs := []exportFile{{rel: filepath.Join("packages", fid, fmt.Sprintf("%s-%s.tar.gz", fid, r.Version)), sha: r.SHA256, n: r.Size}}
		// An icon is looked up once, not once per release sharing it (most of a package's).
		if icon := filepath.Join("icons", r.IconSHA256+"."+r.IconExt); r.IconSHA256 != "" && !seen[icon] {
			n, err := s.store.BlobSize(ctx, r.IconSHA256) // a release read back has no IconSize
			if err != nil {
				return nil, fmt.Errorf("ingest: export: icon %s of %s@%s: %w", r.IconSHA256, r.PackageID, r.Version, err)
			}
			blobs = append(blobs, exportFile{rel: icon, sha: r.IconSHA256, n: n})
		}
		for _, f := range blobs {
			if seen[f.rel] {
				continue
			}
			seen[f.rel] = true
			if f.n, err = s.copyBlob(ctx, f.sha, f.n, filepath.Join(root, f.rel)); err != nil {
				return nil, err
			}
			files = append(files, f)
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	return files, nil
}

func (s *Service) copyBlob(ctx context.Context, sha string, size int64, dst string) (int64, error) {
	src, err := s.blobs.Open(ctx, sha, size)
	if err != nil {
		return 0, fmt.Errorf("ingest: export %s: blob %s: %w", dst, sha, err)
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, fmt.Errorf("ingest: export: %w", err)
	}
	f, err := os.Create(dst)
	if err != nil {
		return 0, fmt.Errorf("ingest: export: %w", err)
	}
	n, err := io.Copy(f, src)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("ingest: export %s: %w", dst, err)
	}
	return n, nil
}

func writeExportFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("ingest: export: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("ingest: export: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("ingest: export %s: %w", path, err)
	}
	return nil
}

// verifySnapshot reads back every file under root: each listed file hashes to its sha256
// (for packages and icons, the one the store records, so a damaged blob is caught here),
// index documents parse, and nothing else is there.
func verifySnapshot(root string, files []exportFile) error {
	want := map[string]bool{}
	var errs []error
	for _, f := range files {
		want[f.rel] = true
		data, err := os.ReadFile(filepath.Join(root, f.rel))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != f.sha {
			errs = append(errs, fmt.Errorf("%s: %d bytes with sha256 %s, want %s as recorded", f.rel, len(data), got, f.sha))
		}
		if f.document && !json.Valid(data) {
			errs = append(errs, fmt.Errorf("%s: not valid JSON", f.rel))
		}
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if rel, _ := filepath.Rel(root, path); !want[rel] {
			errs = append(errs, fmt.Errorf("%s: not part of the snapshot", rel))
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("ingest: export: the written snapshot does not check out, the previous export stays:\n%w", err)
	}
	return nil
}

// swapDir puts the folder tmp in place of dir: dir (if any) moves aside, tmp takes its
// name, the old one is removed. Between the two renames dir is briefly absent; if the
// second fails, the old one is moved back.
func swapDir(tmp, dir string) error {
	old := tmp + ".old"
	hadOld := true
	if err := os.Rename(dir, old); errors.Is(err, fs.ErrNotExist) {
		hadOld = false
	} else if err != nil {
		return fmt.Errorf("ingest: export: move the previous export aside: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if hadOld {
			err = errors.Join(err, os.Rename(old, dir))
		}
		return fmt.Errorf("ingest: export: swap in the new export: %w", err)
	}
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return err
	}
	if hadOld {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("ingest: export: the new export is in place, but the previous one could not be removed from %s: %w", old, err)
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("ingest: export: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("ingest: export: sync %s: %w", dir, err)
	}
	return nil
}

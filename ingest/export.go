package ingest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ExportProgress is told about each file an export writes.
type ExportProgress func(path string, bytes int64)

// Export writes a static mirror of the registry into dir: index.json,
// curupira/index.json, every package version (yanked ones too, since their exact URLs
// stay valid) and every listed icon, laid out as the registry serves them, so that any
// static host or CDN can serve dir at the configured public URL.
func (s *Service) Export(ctx context.Context, dir string, progress ExportProgress) error {
	if err := s.Rebuild(ctx); err != nil {
		return err
	}
	docs := s.Documents()
	if err := writeFile(filepath.Join(dir, "index.json"), docs.Kandev.Body, progress); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "curupira", "index.json"), docs.Curupira.Body, progress); err != nil {
		return err
	}
	rels, err := s.store.AllReleases(ctx)
	if err != nil {
		return err
	}
	for _, r := range rels {
		fid := FileID(r.PackageID)
		dst := filepath.Join(dir, "packages", fid, fmt.Sprintf("%s-%s.tar.gz", fid, r.Version))
		if err := s.copyBlob(r.SHA256, dst, progress); err != nil {
			return err
		}
		if r.IconSHA256 != "" {
			if err := s.copyBlob(r.IconSHA256, filepath.Join(dir, "icons", r.IconSHA256+"."+r.IconExt), progress); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Service) copyBlob(sha, dst string, progress ExportProgress) error {
	src, err := s.store.Blobs.Open(sha)
	if err != nil {
		return fmt.Errorf("ingest: export %s: %w", dst, err)
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("ingest: export: %w", err)
	}
	f, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("ingest: export: %w", err)
	}
	n, err := io.Copy(f, src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("ingest: export %s: %w", dst, err)
	}
	if progress != nil {
		progress(dst, n)
	}
	return nil
}

func writeFile(path string, data []byte, progress ExportProgress) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("ingest: export: %w", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("ingest: export: %w", err)
	}
	if progress != nil {
		progress(path, int64(len(data)))
	}
	return nil
}

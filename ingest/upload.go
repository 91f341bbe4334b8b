package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pluginyard/registry/verify"
)

// Upload is a package being received. Its file name and actor were checked against the
// curated list when it began, before any byte of it was read; its bytes are spooled to the
// local spool folder (SpoolFile), so a caller can read the rest of a request (a bundle part
// after the package part) before anything is published. Close it when done.
type Upload struct {
	s     *Service
	actor Actor
	name  string
	// targets are the listed packages the file name may name, one unless a listed id is
	// another plus "-<version>" (resolveTarget); the manifest must be one of them that the
	// actor may publish. Nil only for an admin's in-process publish without a file name.
	targets []target
	f       *os.File
	w       io.Writer
	n       int64
	limit   int64 // spooling stops one byte past it; verify then refuses the size
}

// BeginUpload authorises an upload named fileName ("<file id>-<version>.tar.gz") by actor a
// and opens its spool. A refusal (*Refusal: 422 publish.filename, 403 publish.unlisted or
// publish.forbidden or publish.quarantined, 409 publish.file_id.collision) costs the same whatever the package
// holds, since none of it has been read.
func (s *Service) BeginUpload(a Actor, fileName string) (*Upload, error) {
	ts, err := s.resolveTarget(a, fileName)
	if err == nil {
		err = s.quarantinedAll(ts) // before any byte is read; commitRow checks again
	}
	if err != nil {
		s.refusedEarly(a, fileName, err)
		return nil, err
	}
	return s.openUpload(a, fileName, ts)
}

// quarantinedAll is the first allowed target's quarantine refusal when every allowed one
// of ts is quarantined, else nil: while one of them may be published, the manifest decides.
func (s *Service) quarantinedAll(ts []target) error {
	var first error
	for _, t := range ts {
		if !t.Allowed {
			continue
		}
		err := s.publishRefusal(t.ID, t.Version)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

func (s *Service) openUpload(a Actor, fileName string, ts []target) (*Upload, error) {
	f, err := s.SpoolFile("upload-*")
	if err != nil {
		return nil, storageErr("spool the upload", err)
	}
	return &Upload{s: s, actor: a, name: fileName, targets: ts, f: f, w: s.spoolWriter(f), limit: s.maxCompressed()}, nil
}

// refusedEarly audits and counts a publish refused before its package was read.
func (s *Service) refusedEarly(a Actor, fileName string, err error) {
	s.auditPublish(context.Background(), a, claimedTarget(fileName), err, nil)
	s.observePublish(nil, err)
}

// ReadFrom spools r; it stops one byte past the package size limit (verification then
// refuses the size). An error writing the spool is a *StorageError when the disk is full;
// an error reading r is returned as is.
func (u *Upload) ReadFrom(r io.Reader) (int64, error) {
	n, err := io.Copy(writerOnly{u.w}, io.LimitReader(r, u.limit+1-u.n))
	u.n += n
	var we *spoolWriteError
	if errors.As(err, &we) {
		return n, storageErr("spool the upload", we.err)
	}
	return n, err
}

// Close removes the spool (a no-op once published into a blob folder, which renamed it).
func (u *Upload) Close() error {
	if u.f == nil {
		return nil
	}
	_ = u.f.Close()
	err := os.Remove(u.f.Name())
	u.f = nil
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// SpoolDir is the folder, in the store's local state folder, where uploads, icons and
// pulled assets are written before they are verified and put in the blob store. Every
// replica has its own; CleanSpool empties it at start.
const SpoolDir = "spool"

// SpoolFile creates a temporary file in the local spool folder (creating the folder on
// first use). The caller removes it; Blobs.Put takes it by path.
func (s *Service) SpoolFile(pattern string) (*os.File, error) {
	dir := filepath.Join(s.store.Dir(), SpoolDir)
	f, err := os.CreateTemp(dir, pattern)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(dir, 0o750); err == nil {
			f, err = os.CreateTemp(dir, pattern)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("ingest: spool file in %s: %w", dir, err)
	}
	return f, nil
}

// CleanSpool removes what interrupted uploads left in the spool folder; serve runs it at
// start, before anything publishes.
func (s *Service) CleanSpool() error {
	dir := filepath.Join(s.store.Dir(), SpoolDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ingest: clean spool: %w", err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("ingest: clean spool: %w", err)
		}
	}
	return nil
}

// maxCompressed is the largest package any kind may be.
func (s *Service) maxCompressed() int64 {
	p, c := s.cfg.Plugin.MaxCompressed, s.cfg.Canvas.MaxCompressed
	if p == 0 {
		p = verify.PluginLimits().MaxCompressed
	}
	if c == 0 {
		c = verify.CanvasLimits().MaxCompressed
	}
	return max(p, c)
}

// spoolWriter is where upload and icon bytes are written: the file, through the test seam
// Config.WrapWriter when set.
func (s *Service) spoolWriter(f *os.File) io.Writer {
	var w io.Writer = f
	if s.cfg.WrapWriter != nil {
		w = s.cfg.WrapWriter(f)
	}
	return &tagWriter{w}
}

// tagWriter marks write errors so that ReadFrom can tell them from read errors.
type tagWriter struct{ w io.Writer }

func (t *tagWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if err != nil {
		err = &spoolWriteError{err}
	}
	return n, err
}

type spoolWriteError struct{ err error }

func (e *spoolWriteError) Error() string { return e.err.Error() }
func (e *spoolWriteError) Unwrap() error { return e.err }

// writerOnly hides ReadFrom so that io.Copy goes through Write.
type writerOnly struct{ io.Writer }

// reopen rewinds the spool for verification.
func (u *Upload) reopen() (*os.File, error) {
	if u.f == nil {
		return nil, errors.New("ingest: upload already closed")
	}
	if _, err := u.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("ingest: rewind the upload: %w", err)
	}
	return u.f, nil
}

// Publish runs the whole pipeline over in. Nothing is stored unless every check passes;
// a refusal is a *Refusal carrying every problem found. The file name is required and
// checked before the package is read; only an admin publishing in-process (the demo
// seeding) may leave it empty, and is then checked after verification.
func (s *Service) Publish(ctx context.Context, in PublishInput) (*PublishResult, error) {
	var (
		u   *Upload
		err error
	)
	if in.FileName == "" && in.Actor.Admin {
		u, err = s.openUpload(in.Actor, "", nil)
	} else {
		u, err = s.BeginUpload(in.Actor, in.FileName)
	}
	if err != nil {
		return nil, err
	}
	defer u.Close()
	if _, err := u.ReadFrom(in.Package); err != nil {
		if !errors.Is(err, ErrStorageFull) {
			err = fmt.Errorf("ingest: read package: %w", err)
		}
		s.refusedEarly(in.Actor, in.FileName, err)
		return nil, err
	}
	return s.PublishUpload(ctx, u, in.Bundle)
}

// Package pack builds a package tarball (<id>-<version>.tar.gz) from a plugin, canvas or
// extension source tree, deterministically: the same tree always gives the same bytes, so a
// release can be rebuilt and compared, and a published sha256 means something.
//
// The archive format, fixed here once:
//
//   - gzip'd tar; the gzip header carries no file name, no modification time (0) and the
//     OS byte 255 ("unknown"), at gzip.BestCompression;
//   - regular files only, no directory entries (hosts create parent directories
//     themselves); paths at the archive root, slash-separated, sorted by byte order;
//   - every entry: mtime 2000-01-01T00:00:00Z (EpochUnix), uid/gid 0, empty uname/gname;
//     mode 0755 for files under server/ (the executables), 0644 for everything else;
//   - USTAR headers; a path USTAR cannot hold (over 255 bytes or non-ASCII) falls back to
//     the PAX form archive/tar chooses, still deterministic;
//   - checksums.txt is generated and written last: one "<sha256 hex>  <path>\n" line per
//     file, sorted by path (the `sha256sum` format, so `sha256sum -c checksums.txt` works
//     after extraction).
//
// What is refused rather than silently skipped or rewritten: a tree that already holds
// checksums.txt or checksums.txt.sig at its root (pack writes the first and a signer writes
// the second after packing), symlinks, anything that is not a regular file or a directory
// (devices, sockets, FIFOs), paths a host or sha256sum could not read back (a backslash, a
// control character, invalid UTF-8), and a .git folder or file at any depth (a
// repository's history and config, which the package would publish: pack a copy of the
// committed files instead, e.g. from `git archive HEAD`). Other hidden files such as
// .DS_Store are included like any other file: what is in the tree is what is in the
// package. Empty
// directories carry no file and so do not appear.
package pack

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// EpochUnix is the modification time of every entry in a package, in Unix seconds:
// 2000-01-01T00:00:00Z. (Unix 0 makes some tar tools warn about an implausible date.)
const EpochUnix = 946684800

// File names that pack writes or that are written after packing; a source tree must not
// hold them at its root.
const (
	ChecksumsFile    = "checksums.txt"
	ChecksumsSigFile = "checksums.txt.sig"
)

// GitDir is the name of Git's metadata folder (or, in a worktree, file), refused at any depth.
const GitDir = ".git"

// Modes of the entries: executables under server/ and everything else.
const (
	ExecMode = 0o755
	FileMode = 0o644
)

// gzipOS is the OS byte of the gzip header: 255 means "unknown" (RFC 1952).
const gzipOS = 255

// ErrInvalidTree matches (errors.Is) every error about the content of the source tree, as
// opposed to an I/O failure, so callers can tell "fix your folder" from "the disk broke".
var ErrInvalidTree = errors.New("invalid source tree")

// TreeError lists everything in a source tree that cannot be packed, one message per
// entry, each naming the path and the fix.
type TreeError struct {
	Problems []string
}

// Error renders one problem on one line, several as an indented list.
func (e *TreeError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0]
	}
	return fmt.Sprintf("%d entries cannot be packed:\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// Is makes errors.Is(err, ErrInvalidTree) true for a TreeError.
func (e *TreeError) Is(target error) bool { return target == ErrInvalidTree }

func treeErrorf(format string, args ...any) error {
	return &TreeError{Problems: []string{fmt.Sprintf(format, args...)}}
}

// Dir packs the directory dir into w. See the package documentation for the format.
func Dir(dir string, w io.Writer) error {
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("pack: %w", err)
	}
	if !info.IsDir() {
		return fmt.Errorf("pack: %w", treeErrorf("%s is not a directory", dir))
	}
	if err := packFS(os.DirFS(dir), w); err != nil {
		return fmt.Errorf("pack %s: %w", dir, err)
	}
	return nil
}

// FS packs the whole of fsys (from its root ".") into w. Given the same files, Dir and FS
// write identical bytes.
func FS(fsys fs.FS, w io.Writer) error {
	if err := packFS(fsys, w); err != nil {
		return fmt.Errorf("pack: %w", err)
	}
	return nil
}

// packFS is FS without the error prefix, which Dir and FS each add.
func packFS(fsys fs.FS, w io.Writer) error {
	files, err := list(fsys)
	if err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return fmt.Errorf("gzip: %w", err)
	}
	zw.OS = gzipOS // Name, Comment, Extra and ModTime stay zero: nothing varies by host
	if err := writeTar(fsys, files, zw); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("gzip: %w", err)
	}
	return nil
}

// Mode returns the tar mode pack gives the file at path p.
func Mode(p string) int64 {
	if strings.HasPrefix(p, "server/") {
		return ExecMode
	}
	return FileMode
}

// list walks fsys and returns the sorted slash paths of its regular files, or an error
// naming every entry that cannot be packed.
func list(fsys fs.FS) ([]string, error) {
	var files, bad []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		if p == "." {
			return nil
		}
		if msg := check(p, d.Type()); msg != "" {
			bad = append(bad, msg)
			return nil
		}
		if d.Name() == GitDir {
			bad = append(bad, fmt.Sprintf("%s is Git metadata (the repository's history and config); a package would publish it: pack a copy of the committed files instead, e.g. from `git archive HEAD`", p))
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(bad) > 0 {
		return nil, &TreeError{Problems: bad}
	}
	if len(files) == 0 {
		return nil, treeErrorf("no files to pack")
	}
	slices.Sort(files)
	return files, nil
}

// check says why the entry at p of type t cannot go into a package, or "".
func check(p string, t fs.FileMode) string {
	switch {
	case t&fs.ModeSymlink != 0:
		return fmt.Sprintf("%s is a symlink; hosts refuse links in a package: copy the file it points to in its place", p)
	case !t.IsRegular() && !t.IsDir():
		return fmt.Sprintf("%s is not a regular file (%s); remove it from the folder", p, t.Type())
	case p == ChecksumsFile:
		return fmt.Sprintf("%s already exists; pack generates it: delete it and pack again", p)
	case p == ChecksumsSigFile:
		return fmt.Sprintf("%s already exists; a signature is made over the generated %s after packing: delete it and pack again", p, ChecksumsFile)
	}
	return checkName(p)
}

// checkName refuses paths that a host's installer or `sha256sum -c` would misread.
func checkName(p string) string {
	switch {
	case !utf8.ValidString(p):
		return fmt.Sprintf("%q is not valid UTF-8; rename it", p)
	case strings.Contains(p, `\`):
		return fmt.Sprintf("%q contains a backslash, which hosts refuse; rename it", p)
	case strings.IndexFunc(p, unicode.IsControl) >= 0:
		return fmt.Sprintf("%q contains a control character; rename it", p)
	}
	return ""
}

// writeTar writes every file, then checksums.txt, as a tar stream into w.
func writeTar(fsys fs.FS, files []string, w io.Writer) error {
	tw := tar.NewWriter(w)
	var sums strings.Builder
	for _, p := range files {
		sum, err := writeFile(tw, fsys, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&sums, "%s  %s\n", sum, p)
	}
	if err := writeEntry(tw, ChecksumsFile, strings.NewReader(sums.String()), int64(sums.Len())); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("tar: %w", err)
	}
	return nil
}

// writeFile copies the file p of fsys into tw and returns its sha256 in hex.
func writeFile(tw *tar.Writer, fsys fs.FS, p string) (string, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() {
		return "", treeErrorf("%s changed while packing and is no longer a regular file", p)
	}
	h := sha256.New()
	if err := writeEntry(tw, p, io.TeeReader(f, h), info.Size()); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeEntry writes one regular-file entry of exactly size bytes read from r.
func writeEntry(tw *tar.Writer, name string, r io.Reader, size int64) error {
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     name,
		Size:     size,
		Mode:     Mode(name),
		ModTime:  time.Unix(EpochUnix, 0),
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("tar header %s: %w", name, err)
	}
	n, err := io.Copy(tw, r)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if n != size {
		return treeErrorf("%s changed size while packing (%d bytes, then %d)", name, size, n)
	}
	return nil
}

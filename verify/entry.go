package verify

import (
	"archive/tar"
	"crypto/sha256"
	"hash"
	"io"
	"path"
	"strings"

	"github.com/pluginyard/registry/manifest"
)

const sha256Size = sha256.Size

// entry handles one tar entry; it reports whether reading may go on.
func (a *archive) entry(tr *tar.Reader, hdr *tar.Header) bool {
	file := displayName(hdr.Name)
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		return true // `git archive` writes one; it carries no file
	}
	isDir := hdr.Typeflag == tar.TypeDir
	if !isDir && hdr.Typeflag != tar.TypeReg {
		a.refuseType(hdr, file)
		return true
	}
	if isSparse(hdr) {
		a.errorf("archive.type", file, "the entry is a sparse file; only regular files and directories are allowed, so store it as a plain file")
		return true
	}
	name, root, issues := cleanName(hdr.Name, isDir)
	for _, is := range issues {
		a.errorf(is.rule, file, "%s", is.why)
	}
	if root || len(issues) > 0 {
		return true
	}
	if len(name) > a.lim.MaxPathLen {
		a.errorf("archive.path.length", file, "the path is %d bytes long; at most %d are allowed", len(name), a.lim.MaxPathLen)
		return true
	}
	if isDir {
		return a.addDir(name, file)
	}
	return a.addFile(tr, hdr, name, file)
}

func (a *archive) refuseType(hdr *tar.Header, file string) {
	switch hdr.Typeflag {
	case tar.TypeSymlink:
		a.errorf("archive.symlink", file, "the entry is a symbolic link (to %q); only regular files and directories are allowed, so ship a copy of the file instead", hdr.Linkname)
	case tar.TypeLink:
		a.errorf("archive.hardlink", file, "the entry is a hard link (to %q); only regular files and directories are allowed, so ship a copy of the file instead", hdr.Linkname)
	case tar.TypeChar, tar.TypeBlock:
		a.errorf("archive.device", file, "the entry is a device node; only regular files and directories are allowed")
	case tar.TypeFifo:
		a.errorf("archive.fifo", file, "the entry is a named pipe (FIFO); only regular files and directories are allowed")
	default:
		a.errorf("archive.type", file, "the entry has tar type %q; only regular files and directories are allowed", string(hdr.Typeflag))
	}
}

// isSparse reports a PAX sparse file: its holes would expand to bytes the archive does not hold.
func isSparse(hdr *tar.Header) bool {
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

func (a *archive) addDir(name, file string) bool {
	switch {
	case a.dirs[name]:
		a.errorf("archive.duplicate", file, "the directory %q appears twice in the archive", name)
		return true
	case a.isFile(name):
		a.errorf("archive.clash", file, "%q is both a file and a directory", name)
		return true
	case a.fileParent(name) != "":
		a.errorf("archive.clash", file, "the directory %q is inside %q, which is a file", name, a.fileParent(name))
		return true
	}
	if len(a.dirs) >= a.lim.MaxFiles {
		a.stop("archive.limit.files", file, "the archive has more than %d directory entries", a.lim.MaxFiles)
		return false
	}
	a.dirs[name] = true
	a.addParents(name)
	return true
}

func (a *archive) isFile(name string) bool { _, ok := a.files[name]; return ok }

// fileParent returns the first parent folder of name that is a regular file, or "".
func (a *archive) fileParent(name string) string {
	for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
		if a.isFile(dir) {
			return dir
		}
	}
	return ""
}

func (a *archive) addParents(name string) {
	for dir := path.Dir(name); dir != "." && !a.parents[dir]; dir = path.Dir(dir) {
		a.parents[dir] = true
	}
}

func (a *archive) addFile(tr *tar.Reader, hdr *tar.Header, name, file string) bool {
	switch {
	case a.isFile(name):
		a.errorf("archive.duplicate", file, "the file %q appears twice in the archive; a host would keep only one of them", name)
		return true
	case a.dirs[name] || a.parents[name]:
		a.errorf("archive.clash", file, "%q is both a file and a directory", name)
		return true
	case a.fileParent(name) != "":
		a.errorf("archive.clash", file, "the file %q is inside %q, which is a file", name, a.fileParent(name))
		return true
	}
	if len(a.files) >= a.lim.MaxFiles {
		a.stop("archive.limit.files", file, "the archive has more than %d files", a.lim.MaxFiles)
		return false
	}
	if !a.fitsLimits(hdr.Size, file) {
		return false
	}
	a.foldCase(name, file)
	a.addParents(name)
	return a.readFile(tr, hdr.Size, name, file)
}

// fitsLimits checks the size a header claims; readFile checks the bytes themselves.
func (a *archive) fitsLimits(claimed int64, file string) bool {
	if claimed > a.lim.MaxFileSize {
		a.stop("archive.limit.file", file, "the file is %d bytes; at most %s per file are allowed", claimed, size(a.lim.MaxFileSize))
		return false
	}
	if a.total+claimed > a.lim.MaxTotalSize {
		a.stop("archive.limit.total", file, "the files add up to more than %s decompressed", size(a.lim.MaxTotalSize))
		return false
	}
	return true
}

// foldCase warns about names that differ only in case: on macOS and Windows hosts one
// would overwrite the other.
func (a *archive) foldCase(name, file string) {
	low := strings.ToLower(name)
	if prev, ok := a.folded[low]; ok {
		a.problems.Warnf("archive.path.case", "", "%q and %q differ only in letter case; on case-insensitive file systems one overwrites the other", prev, name)
		a.problems[len(a.problems)-1].File = file
		return
	}
	a.folded[low] = name
}

// readFile streams one file's content: hashing it, keeping its head, and keeping the whole
// of it when it is one of the few files the checks need.
func (a *archive) readFile(tr *tar.Reader, claimed int64, name, file string) bool {
	room := min(a.lim.MaxFileSize, a.lim.MaxTotalSize-a.total)
	w := a.sink(name, claimed)
	n, err := io.CopyBuffer(w, io.LimitReader(tr, room+1), a.buf)
	a.total += n
	if err != nil {
		// The tar reader keeps the error and returns it from Next, where it is classified.
		return true
	}
	if n > room {
		a.stop("archive.limit.total", file, "the file expands past the decompressed size limit (%s per file, %s in total)", size(a.lim.MaxFileSize), size(a.lim.MaxTotalSize))
		return false
	}
	var sum [sha256Size]byte
	w.h.Sum(sum[:0])
	a.digests[name] = sum
	a.files[name] = manifest.FileInfo{Size: n, Head: w.head}
	if data, ok := w.result(); ok {
		a.kept[name] = data
		if w.image {
			a.images += int64(len(data))
		}
	}
	return true
}

// sink prepares the writer for one file, deciding what of it to keep.
func (a *archive) sink(name string, claimed int64) *fileSink {
	w := &fileSink{h: sha256.New(), name: name}
	switch name {
	case manifestName, extensionName, npmPrefix + extensionName:
		w.limit = a.lim.MaxManifestSize
	case checksumsName, npmPrefix + checksumsName:
		w.limit = checksumsLimit(a.lim)
	case checksumsSigName, npmPrefix + checksumsSigName:
		w.limit = maxSigSize
	case readmeName, npmPrefix + readmeName:
		w.limit = maxReadmeSize
	default:
		if claimed <= maxImageSize && a.images+claimed <= maxImagesTotal {
			w.limit, w.image = maxImageSize, true
		}
	}
	if w.limit > 0 && claimed <= w.limit {
		w.keep = make([]byte, 0, claimed)
	}
	return w
}

// checksumsLimit bounds checksums.txt: one full line per allowed file.
func checksumsLimit(lim Limits) int64 {
	return int64(lim.MaxFiles) * int64(2*sha256Size+3+lim.MaxPathLen)
}

// fileSink receives one file's bytes. Files named in sink are kept up to their limit;
// other small files are kept only while they may be images: by extension, or once the
// first 512 bytes sniff as one.
type fileSink struct {
	h       hash.Hash
	name    string
	head    []byte
	keep    []byte
	limit   int64 // keep at most this many bytes; 0 keeps nothing
	image   bool  // kept only if it turns out to be an image
	dropped bool  // longer than limit, or not an image after all
}

func (w *fileSink) Write(p []byte) (int, error) {
	w.h.Write(p)
	if len(w.head) < headSize {
		w.head = append(w.head, p[:min(len(p), headSize-len(w.head))]...)
		if w.image && len(w.head) == headSize && !looksLikeImage(w.name, w.head) {
			w.dropped = true
		}
	}
	if w.limit > 0 && !w.dropped {
		if int64(len(w.keep)+len(p)) > w.limit {
			w.keep, w.dropped = nil, true
		} else {
			w.keep = append(w.keep, p...)
		}
	}
	return len(p), nil
}

// result returns the kept bytes, if the whole file was kept.
func (w *fileSink) result() ([]byte, bool) {
	if w.limit == 0 || w.dropped || w.image && !looksLikeImage(w.name, w.head) {
		return nil, false
	}
	return w.keep, true
}

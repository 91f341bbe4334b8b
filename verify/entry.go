package verify

import (
	"archive/tar"
	"crypto/sha256"
	"hash"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/pluginyard/registry/manifest"
)

const sha256Size = sha256.Size

// entry handles one tar entry; it reports whether reading may go on.
func (a *archive) entry(tr *tar.Reader, hdr *tar.Header) bool {
	file := displayName(hdr.Name)
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		a.errorf("archive.pax.global", "", "the archive has a global PAX header (records %s); GNU tar and Python's tarfile apply it to every later entry (a global path renames them) while other readers ignore it, so the files a host extracts could differ from the ones checked. Rebuild the package with the pack tool or `tar --format=ustar` (`git archive` writes one: use it only to export the tree, then pack)", paxKeys(hdr.PAXRecords))
		return true
	}
	if !a.traced(hdr, file) {
		return true
	}
	isDir := hdr.Typeflag == tar.TypeDir
	if !isDir && hdr.Typeflag != tar.TypeReg {
		a.refuseType(hdr, file)
		return true
	}
	if !a.plainHeader(hdr, file, isDir) {
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

// traced checks the header chain the trace saw for hdr and tells the trace how much data
// follows. It reports false for a sparse file, after which the trace cannot follow the
// stream (a sparse entry's stored size differs from its size); the entry is refused.
func (a *archive) traced(hdr *tar.Header, file string) bool {
	if rule, why := a.trace.headerProblem(); rule != "" {
		a.errorf(rule, file, "%s", why)
	}
	if isSparse(hdr) {
		a.trace.stop()
		a.errorf("archive.type", file, "the entry is a sparse file; only regular files and directories are allowed, so store it as a plain file")
		return false
	}
	data := hdr.Size
	switch hdr.Typeflag {
	case tar.TypeLink, tar.TypeSymlink, tar.TypeChar, tar.TypeBlock, tar.TypeDir, tar.TypeFifo:
		data = 0 // archive/tar reads no data for these, whatever the size field says
	}
	a.trace.dataFollows(data)
	return true
}

// paxAllowed are the PAX records every extractor reads the same way: the header fields
// POSIX defines (archive/tar fills Header from them), and "comment", which POSIX says
// readers ignore. Anything else (SCHILY.xattr.*, LIBARCHIVE.*, GNU.sparse.*, charset,
// hdrcharset) is refused: hdrcharset=BINARY makes Python's tarfile and libarchive decode
// names differently from archive/tar, extended attributes and vendor records are applied by
// some extractors and not others, and none is needed to ship a package.
var paxAllowed = map[string]bool{
	"path": true, "linkpath": true, "size": true, "mtime": true, "atime": true, "ctime": true,
	"uid": true, "gid": true, "uname": true, "gname": true, "comment": true,
}

// plainHeader refuses header data that extractors interpret differently: PAX records other
// than paxAllowed, and a directory claiming data (archive/tar skips none, other readers
// may skip the claimed bytes and so read different entries after it).
func (a *archive) plainHeader(hdr *tar.Header, file string, isDir bool) bool {
	var odd []string
	for k := range hdr.PAXRecords {
		if !paxAllowed[k] {
			odd = append(odd, k)
		}
	}
	if len(odd) > 0 {
		sort.Strings(odd)
		a.errorf("archive.pax.key", file, "the entry has PAX records %s; only %s are allowed, since extractors apply other records differently. Rebuild with the pack tool, or without extended attributes (`tar --no-xattrs`, `bsdtar --no-xattrs`, COPYFILE_DISABLE=1 on macOS)", quoteKeys(odd), quoteKeys(sortedKeys(paxAllowed)))
		return false
	}
	if isDir && hdr.Size != 0 {
		a.errorf("archive.header.size", file, "the directory entry claims %d bytes of data; extractors disagree on whether to skip them, so a directory must have size 0", hdr.Size)
		return false
	}
	return true
}

func paxKeys(records map[string]string) string {
	if len(records) == 0 {
		return "none"
	}
	return quoteKeys(sortedKeys(records))
}

func quoteKeys(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = strconv.Quote(k)
	}
	return strings.Join(q, ", ")
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

// isSparse reports a sparse file, old GNU ('S') or PAX: its holes would expand to bytes
// the archive does not hold.
func isSparse(hdr *tar.Header) bool {
	if hdr.Typeflag == tar.TypeGNUSparse {
		return true
	}
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
	a.collides(name, file)
	a.addParents(name, file)
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

func (a *archive) addParents(name, file string) {
	for dir := path.Dir(name); dir != "." && !a.parents[dir]; dir = path.Dir(dir) {
		a.parents[dir] = true
		a.collides(dir, file)
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
	a.collides(name, file)
	a.addParents(name, file)
	return a.readFile(tr, hdr.Size, name, file)
}

// fitsLimits checks the size a header claims; readFile checks the bytes themselves.
func (a *archive) fitsLimits(claimed int64, file string) bool {
	if claimed > a.lim.MaxFileSize {
		a.stop("archive.limit.file", file, "the file is %s; at most %s per file are allowed", size(claimed), size(a.lim.MaxFileSize))
		return false
	}
	if a.total+claimed > a.lim.MaxTotalSize {
		a.stop("archive.limit.total", file, "the files add up to more than %s decompressed", size(a.lim.MaxTotalSize))
		return false
	}
	return true
}

// collides refuses a name equal to an earlier one under Unicode case folding or
// normalization (foldKey): macOS and Windows hosts store both under one name, so one
// file overwrites the other (manifest.yaml and MANIFEST.YAML, "é" composed and decomposed).
// Directories count too, explicit or implied by a file's path: "Docs/a" and "docs/a" are
// caught at their directories already. It reports whether name is new.
func (a *archive) collides(name, file string) bool {
	key := foldKey(name)
	prev, ok := a.folded[key]
	if ok && prev != name {
		a.errorf("archive.name.collision", file, "%q and %q are the same name on case-insensitive or normalizing file systems (macOS, Windows), so one would overwrite the other there; rename one of them", prev, name)
		return true
	}
	a.folded[key] = name
	return false
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
	a.scanName(name)
	a.reportFindings(name, w.scan.close())
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
	w := &fileSink{h: sha256.New(), name: name, scan: a.scan.reset()}
	switch name {
	case manifestName, extensionName, npmPrefix + extensionName:
		w.limit = a.lim.MaxManifestSize
	case checksumsName, npmPrefix + checksumsName:
		w.limit = checksumsLimit(a.lim)
	case checksumsSigName, npmPrefix + checksumsSigName:
		w.limit = maxSigSize
	case readmeName, npmPrefix + readmeName:
		w.limit = maxReadmeSize
	case changelogName, npmPrefix + changelogName:
		w.limit = maxChangelogSize
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
	scan    *scanner
}

func (w *fileSink) Write(p []byte) (int, error) {
	w.h.Write(p)
	w.scan.write(p)
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

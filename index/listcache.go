package index

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/pluginyard/registry/problem"
)

// ListCache keeps what LoadList made of a plugins.yaml in one file of Dir, so that the next
// start or reload of the same bytes by the same program decodes that file instead of
// parsing and checking the YAML again: at 50,000 entries parsing and checking cost 1.86 s
// of CPU, decoding the cached form 72 ms (BenchmarkLoadList, BenchmarkLoadListCached). The file is keyed by
// the SHA-256 of the list's bytes and of the running executable's Go build ID, so any
// change to the list or to the program (a rule added, a default changed) parses again;
// without a build ID (not an ELF executable) nothing is cached. Only a list without
// error-severity problems is kept: a refused list is parsed, and refused, every time.
//
// The file is as trusted as the data directory it lives in (whoever can write it can
// write the database too). A file that is missing, unreadable, of another key or damaged
// is ignored and replaced; a write that fails is reported and changes nothing else.
type ListCache struct {
	Dir string
}

// listCacheFormat versions the cache file's layout (the build ID covers the code).
const listCacheFormat = 1

// listCacheFile is the cache's file in Dir.
const listCacheFile = "plugins-list.gob"

type listCacheEntry struct {
	Format   int
	Key      [sha256.Size]byte
	List     *List
	Problems problem.List // not yet in a file: Load puts them in the path it was given
}

// Loaded is what ListCache.Load made of a list.
type Loaded struct {
	List     *List
	Problems problem.List // as LoadList's, in the file Load was given
	Cached   bool         // the cached form was used
	WriteErr error        // the cache could not be written (List and Problems are good regardless)
}

// Load is LoadList(path) through the cache; the error is for reading path only.
func (c ListCache) Load(path string) (Loaded, error) {
	data, err := readList(path)
	if err != nil {
		return Loaded{}, err
	}
	id := buildID()
	if c.Dir == "" || id == "" {
		l, probs := listOf(data)
		return Loaded{List: l, Problems: probs.InFile(path)}, nil
	}
	key := listCacheKey(id, data)
	file := filepath.Join(c.Dir, listCacheFile)
	if e, ok := readListCache(file, key); ok {
		return Loaded{List: e.List, Problems: e.Problems.InFile(path), Cached: true}, nil
	}
	l, probs := listOf(data)
	out := Loaded{List: l, Problems: probs.InFile(path)}
	if l != nil && !probs.HasErrors() {
		out.WriteErr = writeListCache(file, listCacheEntry{Format: listCacheFormat, Key: key, List: l, Problems: probs})
	}
	return out, nil
}

// listCacheKey binds the list's bytes to the program that checked them.
func listCacheKey(buildID string, data []byte) [sha256.Size]byte {
	h := sha256.New()
	fmt.Fprintf(h, "plugins-list %d %d:%s\n", listCacheFormat, len(buildID), buildID)
	h.Write(data)
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

func readListCache(file string, key [sha256.Size]byte) (listCacheEntry, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return listCacheEntry{}, false
	}
	var e listCacheEntry
	if gob.NewDecoder(bytes.NewReader(b)).Decode(&e) != nil || e.Format != listCacheFormat || e.Key != key || e.List == nil {
		return listCacheEntry{}, false
	}
	return e, true
}

// writeListCache replaces the cache file whole (a temporary file renamed over it), so a
// reader sees the old entry or the new one, never a part.
func writeListCache(file string, e listCacheEntry) error {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(e); err != nil {
		return fmt.Errorf("index: list cache: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o750); err != nil {
		return fmt.Errorf("index: list cache: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), listCacheFile+".*")
	if err != nil {
		return fmt.Errorf("index: list cache: %w", err)
	}
	_, werr := tmp.Write(b.Bytes())
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("index: list cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("index: list cache: %w", err)
	}
	return nil
}

// buildID identifies the running executable: its Go build ID, which changes with any
// change to the program's code or build, and the file's size and modification time (a
// build with a redacted build ID, as some build systems make, still changes those); ""
// when the build ID cannot be read. Linux's /proc/self/exe is the file this process runs,
// even after a newer binary replaced it on disk. A variable for tests.
var buildID = sync.OnceValue(executableBuildID)

func executableBuildID() string {
	exe := "/proc/self/exe"
	if _, err := os.Stat(exe); err != nil {
		if exe, err = os.Executable(); err != nil {
			return ""
		}
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	f, err := elf.Open(exe)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	sec := f.Section(".note.go.buildid")
	if sec == nil {
		return ""
	}
	note, err := sec.Data()
	if err != nil || len(note) == 0 {
		return ""
	}
	return fmt.Sprintf("%s size=%d mtime=%d", note, fi.Size(), fi.ModTime().UnixNano())
}

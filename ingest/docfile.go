package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// docDir is where the built documents are also kept as files, under the data directory,
// so the server can hand them to the kernel (sendfile) as a static file server would. They
// are derived data: rewritten by every rebuild, including the one at start.
const docDir = "index"

// writeDocFiles writes each document's body to a file named by its ETag and records the
// path; files of earlier rebuilds are removed (a request that has one open keeps reading
// it). A failure only costs the fast path: the bytes are still served from memory.
func (s *Service) writeDocFiles(docs *Documents) {
	dir := filepath.Join(s.store.Dir(), docDir)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		s.log.Warn("index documents stay in memory only", "err", err)
		return
	}
	keep := map[string]bool{}
	for name, d := range map[string]*Document{"kandev": &docs.Kandev, "curupira": &docs.Curupira} {
		path := filepath.Join(dir, fmt.Sprintf("%s-%s.json", name, strings.Trim(d.ETag, `"`)))
		if err := writeAtomic(path, d.Body); err != nil {
			s.log.Warn("index document stays in memory only", "path", path, "err", err)
			continue
		}
		d.File = path
		keep[path] = true
	}
	old, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, p := range old {
		if !keep[p] {
			_ = os.Remove(p)
		}
	}
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o640); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

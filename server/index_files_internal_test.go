package server

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDocFilePool: a file handed back is handed out again (no new open); a request's
// file is never handed to another while it is out; at most docFilesPerPath stay open per
// path and docFilePaths paths are kept, the least recently used one's files closed; a file
// of another size is not opened.
func TestDocFilePool(t *testing.T) {
	dir := t.TempDir()
	paths := make([]string, docFilePaths+1)
	for i := range paths {
		paths[i] = filepath.Join(dir, "doc"+string(rune('a'+i))+".json")
		if err := os.WriteFile(paths[i], []byte("0123456789"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var p docFilePool
	if f := p.get(paths[0], 9); f != nil {
		t.Fatal("a file of 10 bytes was opened as one of 9")
	}
	a, b := p.get(paths[0], 10), p.get(paths[0], 10)
	if a == nil || b == nil || a == b {
		t.Fatalf("two requests at once got %p and %p: want two open files", a, b)
	}
	p.put(paths[0], a)
	if again := p.get(paths[0], 10); again != a {
		t.Errorf("after a file was handed back, get opened another")
	}
	p.put(paths[0], a)
	p.put(paths[0], b)
	var extra []*os.File
	for range docFilesPerPath + 2 {
		extra = append(extra, p.get(paths[0], 10))
	}
	for _, f := range extra {
		p.put(paths[0], f)
	}
	open := 0
	for _, f := range extra {
		if _, err := f.Stat(); err == nil {
			open++
		}
	}
	if open != docFilesPerPath {
		t.Errorf("%d files of one path left open, want %d", open, docFilesPerPath)
	}
	for _, path := range paths[1:] { // one path more than the pool keeps: paths[0] goes
		p.put(path, p.get(path, 10))
	}
	for _, f := range extra {
		if _, err := f.Stat(); err == nil {
			t.Fatal("the least recently used path's files are still open")
		}
	}
	if len(p.paths) != docFilePaths {
		t.Errorf("pool keeps %d paths, want %d", len(p.paths), docFilePaths)
	}
	kept := p.get(paths[1], 10)
	p.put(paths[1], kept)
	if err := os.WriteFile(paths[1], []byte("0123456789 and more"), 0o644); err != nil { // rewritten in place
		t.Fatal(err)
	}
	if f := p.get(paths[1], 10); f != nil {
		t.Error("a pooled file rewritten to another size was handed out")
	}
	if _, err := kept.Stat(); err == nil {
		t.Error("the pooled file of the wrong size was not closed")
	}
}

package ingest_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
)

// The embedded default's store and blob folder are what cmd/registry hands ingest.New.
var (
	_ ingest.Store = (*store.Store)(nil)
	_ ingest.Blobs = (*store.Folder)(nil)
)

// concreteStoreNames are the store package's names that pick a backend: ingest works
// through its Store and Blobs interfaces and names none of them, except New's default
// (blobsOf: the folder of a *store.Store when Config.Blobs is nil).
var concreteStoreNames = map[string]bool{
	"Store": true, "Blobs": true, "Folder": true, "Open": true, "OpenURL": true, "OpenBlobs": true, "OpenFolder": true,
}

// TestIngestNamesNoConcreteStore keeps the pipeline on its interfaces, so that a second
// metadata or blob backend never touches it: no non-test file of ingest names the
// concrete store, its blob folder or their openers outside blobsOf.
func TestIngestNamesNoConcreteStore(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	parsed, allowed := 0, 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		parsed++
		for _, d := range f.Decls {
			inDefault := false
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "blobsOf" {
				inDefault = true
			}
			ast.Inspect(d, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "store" && concreteStoreNames[sel.Sel.Name] {
					if inDefault {
						allowed++
						return true
					}
					t.Errorf("%s: names store.%s, the concrete store: use the Store or Blobs interface (store.go)", fset.Position(sel.Pos()), sel.Sel.Name)
				}
				return true
			})
		}
	}
	if parsed < 20 || allowed == 0 {
		t.Fatalf("parsed %d non-test files, %d allowed names in blobsOf: the scan looks in the wrong place", parsed, allowed)
	}
}

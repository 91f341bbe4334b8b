package server_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
)

// The embedded default's store is what cmd/registry hands server.New.
var _ server.Metadata = (*store.Store)(nil)

// storeNamesAllowed are the store package's names the server may use: plain data,
// sentinels and pure functions, the same whatever backend answers. The concrete store
// (store.Store, store.Blobs, store.Open, …) is not among them.
var storeNamesAllowed = map[string]bool{
	"Release": true, "Package": true, "Curation": true, "AuditEntry": true, "SyncState": true,
	"SearchQuery": true, "SearchResult": true, "SearchCap": true, "DayCount": true, "DayOf": true,
	"BlobUse": true, "ErrNotFound": true, "ErrBlobMissing": true, "ErrBlobCorrupt": true,
	"WebhookDelivery": true, "WebhookDeliveryQuery": true,
}

// TestHandlersUseNoConcreteStore keeps the server on its Metadata interface and the
// ingest service: no non-test file may call .Store() (ingest.Service's accessor of the
// concrete store) or name anything of package store beyond storeNamesAllowed, so that a
// second backend never touches a handler.
func TestHandlersUseNoConcreteStore(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	parsed := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range layerViolations(t, f, src) {
			t.Errorf("%s:%d: %s", f, v.line, v.message())
		}
		parsed++
	}
	if parsed < 10 {
		t.Fatalf("parsed only %d non-test files of server/: the scan looks in the wrong folder", parsed)
	}
}

// violation is one use of the concrete store: what ("calls .Store()", "names store.X")
// and where.
type violation struct {
	line int
	what string
}

func (v violation) message() string {
	if v.what == "calls .Store()" {
		return v.what + ", the concrete store: read through s.md (server.Metadata) or a method of *ingest.Service"
	}
	return v.what + ": the server may name only the store's plain data and sentinels (storeNamesAllowed); add the read to server.Metadata instead"
}

// layerViolations lists every .Store() call and every name of package store outside
// storeNamesAllowed in one Go source file.
func layerViolations(t *testing.T, name string, src []byte) []violation {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	pkg := storeImportName(f)
	var out []violation
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			// A zero-argument Store: atomic values' Store takes one.
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Store" && len(n.Args) == 0 {
				out = append(out, violation{fset.Position(n.Pos()).Line, "calls .Store()"})
			}
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && pkg != "" && x.Name == pkg && !storeNamesAllowed[n.Sel.Name] {
				out = append(out, violation{fset.Position(n.Pos()).Line, "names store." + n.Sel.Name})
			}
		}
		return true
	})
	return out
}

// storeImportName is the name package store goes by in f ("" when f does not import it).
func storeImportName(f *ast.File) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "github.com/pluginyard/registry/store" {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return "store"
		}
	}
	return ""
}

// TestLayerScanFindsViolations runs the scan on sources that break the rule in each way
// it knows, and on one that keeps it, so that the guard above cannot pass by seeing
// nothing.
func TestLayerScanFindsViolations(t *testing.T) {
	tests := []struct {
		name, src string
		want      []violation
	}{
		{"service store accessor", `package server
func (s *Server) h() { _, _ = s.svc.Store().Releases(nil, "x") }`, []violation{{2, "calls .Store()"}}},
		{"concrete type", `package server
import "github.com/pluginyard/registry/store"
var st *store.Store`, []violation{{3, "names store.Store"}}},
		{"renamed import, blob folder, constructor", `package server
import st "github.com/pluginyard/registry/store"
func f(b *st.Blobs) { _, _ = st.Open(nil, "") }`, []violation{{3, "names store.Blobs"}, {3, "names store.Open"}}},
		{"plain data, sentinels and atomic stores are fine", `package server
import ("errors"; "sync/atomic"; "github.com/pluginyard/registry/store")
var p atomic.Pointer[store.Release]
func f(err error) bool { p.Store(nil); return errors.Is(err, store.ErrNotFound) }`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := layerViolations(t, "x.go", []byte(tt.src))
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(violation{})); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

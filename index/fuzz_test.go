package index_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/problem"
)

// FuzzParseList checks that any input yields positioned registry.* problems, never a panic,
// and that a list without errors keeps the invariants its users rely on.
func FuzzParseList(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("..", "testdata", "index", "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	invalid, err := filepath.Glob(filepath.Join("..", "testdata", "index", "invalid", "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range append(seeds, invalid...) {
		f.Add(mustRead(f, path))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, probs := index.ParseList(data)
		for _, p := range probs {
			if _, _, _, ok := index.Position(p.Path); !ok {
				t.Errorf("problem without a position: %+v", p)
			}
			if !strings.HasPrefix(p.Rule, "registry.") || (p.Severity != problem.Error && p.Severity != problem.Warning) {
				t.Errorf("malformed problem: %+v", p)
			}
		}
		if probs.HasErrors() {
			return
		}
		if l == nil {
			t.Fatal("no errors but no list")
		}
		checkListInvariants(t, l)
	})
}

func checkListInvariants(t *testing.T, l *index.List) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range l.Plugins {
		if seen[e.ID] || e.ID == "" || e.Repo == "" {
			t.Errorf("bad or repeated entry %+v", e)
		}
		seen[e.ID] = true
		if e.Kind != index.KindPlugin && e.Kind != index.KindCanvas {
			t.Errorf("entry %q kind %q", e.ID, e.Kind)
		}
		if len(e.Previews) > index.MaxPreviews || (e.Kind == index.KindCanvas && len(e.Previews) == 0) {
			t.Errorf("entry %q has %d previews", e.ID, len(e.Previews))
		}
		if s := e.Signing; s != nil && s.Sigstore != nil && (s.Sigstore.Repository == "" || s.Sigstore.Issuer == "") {
			t.Errorf("entry %q sigstore identity without defaults: %+v", e.ID, s.Sigstore)
		}
	}
}

// FuzzCheckKandev checks that any bytes give problems with a rule, never a panic, and that a
// document CheckKandev accepts decodes with a non-null plugins array.
func FuzzCheckKandev(f *testing.F) {
	f.Add(mustRead(f, filepath.Join("..", "testdata", "index", "kandev.golden.json")))
	f.Add(entryDoc(entry(canvasOK)))
	f.Add([]byte(`{"schema_version":1,"plugins":null}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		probs := index.CheckKandev(doc)
		for _, p := range probs {
			if !strings.HasPrefix(p.Rule, "index.") || p.Message == "" {
				t.Errorf("malformed problem: %+v", p)
			}
		}
		if probs.HasErrors() {
			return
		}
		var d struct {
			Plugins *[]json.RawMessage `json:"plugins"`
		}
		if err := json.Unmarshal(doc, &d); err != nil || d.Plugins == nil {
			t.Errorf("accepted a document without a plugins array: %v", err)
		}
	})
}

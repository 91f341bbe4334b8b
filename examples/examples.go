// Package examples holds the example plugin sources that the demo registry packs and
// publishes at start (`registry serve --demo`), embedded so that the server does not depend
// on its working directory. Each top-level folder is one package source: a Kandev plugin or
// canvas (manifest.yaml) or a Curupira extension (curupira-extension.toml).
package examples

import (
	"embed"
	"fmt"
	"io"
	"io/fs"
	"slices"

	"github.com/pluginyard/registry/pack"
)

// files holds every example folder, hidden files included (the "all:" prefix), so that an
// embedded example packs to the same bytes as the folder on disk.
//
//go:embed all:curupira-github-issues all:hello-managed all:pr-insights all:slack-relay all:task-board-canvas
var files embed.FS

// FS returns the embedded examples; its top-level directories are the examples (Names).
func FS() fs.FS {
	return files
}

// Names returns the example folder names, sorted.
func Names() []string {
	entries, err := files.ReadDir(".")
	if err != nil {
		// The root of an embed.FS always reads; anything else is a build defect.
		panic(fmt.Sprintf("examples: read embedded root: %v", err))
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// Pack writes the package of the example name to w, as `registry pack examples/<name>`
// would: the bytes are identical.
func Pack(name string, w io.Writer) error {
	if !slices.Contains(Names(), name) {
		return fmt.Errorf("examples: no example %q (have %v)", name, Names())
	}
	sub, err := fs.Sub(files, name)
	if err != nil {
		return fmt.Errorf("examples: %s: %w", name, err)
	}
	if err := pack.FS(sub, w); err != nil {
		return fmt.Errorf("examples: %s: %w", name, err)
	}
	return nil
}

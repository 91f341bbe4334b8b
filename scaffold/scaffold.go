// Package scaffold writes the starting source tree of a Kandev plugin, a Kandev canvas or a
// Curupira extension (`registry init`): a manifest whose comments explain every field, a
// README, an icon, what the manifest names (launchers, an entry page, a script), and a
// GitHub Actions workflow that packs, verifies, signs and publishes every release tag.
//
// Every tree is checked before it is returned: packed in memory and run through
// verify.Package, the registry's own checks. So an id is judged by the very rules the
// manifest is judged by, and a template that stopped passing them fails here rather than
// on an author's first release.
package scaffold

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing/fstest"
	"text/template"

	"github.com/pluginyard/registry/extension"
	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/verify"
)

// Kind is what a tree builds.
type Kind string

// The kinds of tree.
const (
	Plugin    Kind = "plugin"    // a managed Kandev plugin (runtime.type: binary)
	Canvas    Kind = "canvas"    // a Kandev canvas: one static web app and a distribution: block
	Extension Kind = "extension" // a Curupira trigger extension
)

// Kinds lists every kind, in the order help texts show them.
var Kinds = []Kind{Plugin, Canvas, Extension}

// FirstVersion is the version every new tree starts at.
const FirstVersion = "0.1.0"

// templateRoot holds one folder per layer; all: keeps .github and .gitattributes.
//
//go:embed all:templates
var templates embed.FS

const templateRoot = "templates"

// layers are the template folders that make up each kind's tree.
var layers = map[Kind][]string{
	Plugin:    {"common", "kandev", "plugin"},
	Canvas:    {"common", "kandev", "canvas"},
	Extension: {"common", "extension"},
}

// File is one file of a tree.
type File struct {
	Path string // slash-separated, relative to the tree's root
	Data []byte
	Mode fs.FileMode // pack.ExecMode under server/, else pack.FileMode
}

// IDError says why an id was refused: the manifest rules it breaks, as verify reports them.
type IDError struct {
	Kind     Kind
	ID       string
	Problems problem.List
}

func (e *IDError) Error() string {
	msgs := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		msgs = append(msgs, fmt.Sprintf("[%s] %s", p.Rule, p.Message))
	}
	return fmt.Sprintf("%s id %q is refused by the manifest rules: %s", e.Kind, e.ID, strings.Join(msgs, "; "))
}

// ParseKind returns the Kind named s.
func ParseKind(s string) (Kind, error) {
	k := Kind(s)
	if _, ok := layers[k]; !ok {
		return "", fmt.Errorf("unknown kind %q; want one of %s", s, kindList())
	}
	return k, nil
}

func kindList() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// FileID is the id as it appears in the package file name: extension.FileID of it.
func FileID(id string) string { return extension.FileID(id) }

// Tree renders the files of kind for id, sorted by path, and checks them with
// verify.Package. An id the manifest rules refuse gives an *IDError.
func Tree(ctx context.Context, kind Kind, id string) ([]File, error) {
	if _, ok := layers[kind]; !ok {
		return nil, fmt.Errorf("scaffold: unknown kind %q; want one of %s", kind, kindList())
	}
	files, err := render(kind, id)
	if err != nil {
		return nil, err
	}
	if err := check(ctx, kind, id, files); err != nil {
		return nil, err
	}
	return files, nil
}

// data is what the templates see.
type data struct {
	Kind        Kind
	ID          string // the manifest id (Kandev) or name (Curupira)
	FileID      string // ID as in the package file name
	DisplayName string
	Initial     string // the icon's letter
}

func newData(kind Kind, id string) data {
	name := displayName(id)
	initial := "?"
	if name != "" {
		initial = strings.ToUpper(name[:1])
	}
	return data{Kind: kind, ID: id, FileID: FileID(id), DisplayName: name, Initial: initial}
}

// displayName turns "acme-task.board" (or "@acme/task-board") into "Acme Task Board".
func displayName(id string) string {
	if _, rest, ok := strings.Cut(id, "/"); ok {
		id = rest
	}
	words := strings.FieldsFunc(id, func(r rune) bool { return r == '-' || r == '_' || r == '.' || r == '~' || r == '@' })
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
}

var funcs = template.FuncMap{"quote": strconv.Quote}

// render executes every template of kind's layers; a later layer's file replaces an
// earlier one's at the same path.
func render(kind Kind, id string) ([]File, error) {
	d := newData(kind, id)
	byPath := map[string]File{}
	for _, layer := range layers[kind] {
		root := path.Join(templateRoot, layer)
		err := fs.WalkDir(templates, root, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			rel := strings.TrimPrefix(p, root+"/")
			out, err := execute(p, d)
			if err != nil {
				return err
			}
			byPath[rel] = File{Path: rel, Data: out, Mode: fs.FileMode(pack.Mode(rel))}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("scaffold: %w", err)
		}
	}
	files := make([]File, 0, len(byPath))
	for _, f := range byPath {
		files = append(files, f)
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

// execute renders one template. The delimiters are [% %], so that the workflow's own
// ${{ }} expressions and TOML and YAML brackets pass through untouched.
func execute(name string, d data) ([]byte, error) {
	src, err := templates.ReadFile(name)
	if err != nil {
		return nil, err
	}
	t, err := template.New(path.Base(name)).Delims("[%", "%]").Funcs(funcs).Option("missingkey=error").Parse(string(src))
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", name, err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, d); err != nil {
		return nil, fmt.Errorf("template %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

// check packs files as `registry pack` would and verifies the package under its default
// name. Problems at the id field refuse the id; any other problem is a template defect.
func check(ctx context.Context, kind Kind, id string, files []File) error {
	fsys := fstest.MapFS{}
	for _, f := range files {
		fsys[f.Path] = &fstest.MapFile{Data: f.Data, Mode: f.Mode}
	}
	var pkg bytes.Buffer
	if err := pack.FS(fsys, &pkg); err != nil {
		return fmt.Errorf("scaffold: pack the %s tree: %w", kind, err)
	}
	rep, err := verify.Package(ctx, &pkg, verify.Options{FileName: FileID(id) + "-" + FirstVersion + ".tar.gz"})
	if err != nil {
		return fmt.Errorf("scaffold: verify the %s tree: %w", kind, err)
	}
	field := "id"
	if kind == Extension {
		field = "name"
	}
	var idProbs problem.List
	for _, p := range rep.Problems {
		if p.Path == field {
			idProbs = append(idProbs, p)
		}
	}
	if len(idProbs) > 0 {
		return &IDError{Kind: kind, ID: id, Problems: idProbs}
	}
	if len(rep.Problems) > 0 {
		return fmt.Errorf("scaffold: the %s template for id %q draws problems (a defect of the template): %w", kind, id, errors.New(problemLines(rep.Problems)))
	}
	return nil
}

func problemLines(l problem.List) string {
	lines := make([]string, len(l))
	for i, p := range l {
		lines[i] = p.String()
	}
	return strings.Join(lines, "; ")
}

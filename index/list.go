package index

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"gopkg.in/yaml.v3"

	"github.com/pluginyard/registry/extension"
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/version"
)

// Kinds of plugin entry. An entry without a kind is a plugin.
const (
	KindPlugin = "plugin"
	KindCanvas = "canvas"
)

// DefaultIssuer is the OIDC issuer of GitHub Actions, the issuer a sigstore identity gets
// when plugins.yaml names none.
const DefaultIssuer = "https://token.actions.githubusercontent.com"

// maxListSize bounds what LoadList reads; a curated list of thousands of entries is far
// below it.
const maxListSize = 8 << 20

// List is the decoded registry list: the plugins and the Curupira extensions that this
// registry lists, in file order.
type List struct {
	Plugins    []Entry
	Extensions []ExtensionEntry
}

// Entry is one plugins.yaml plugin entry after defaults: Kind is "plugin" or "canvas", and a
// Signing block has its sigstore repository and issuer filled in.
type Entry struct {
	ID         string
	Repo       string // "owner/name" on GitHub
	Kind       string
	Categories []string
	Featured   bool
	Official   bool
	Previews   []Preview
	Signing    *Signing
	Owners     []string // publisher names allowed to publish this id
	// SimilarToAllowed names the listed ids this one may resemble (CheckLookalikes).
	SimilarToAllowed []string
	// ScanAllow names the content-scan findings publish allows (scan_allow).
	ScanAllow []ScanAllow
}

// ExtensionEntry is one plugins.yaml extensions entry (a Curupira trigger extension,
// identified by its npm-style package name).
type ExtensionEntry struct {
	Name       string
	Repo       string
	Categories []string
	Featured   bool
	Signing    *Signing
	Owners     []string
	// SimilarToAllowed names the listed extensions this one may resemble.
	SimilarToAllowed []string
	// ScanAllow names the content-scan findings publish allows (scan_allow).
	ScanAllow []ScanAllow
}

// Preview is one listing image: an absolute https URL and its alternative text.
type Preview struct {
	URL string `json:"url"`
	Alt string `json:"alt"`
	// RegistryURL is this registry's own copy of the image (index.json only; plugins.yaml
	// cannot set it): an additive field, which hosts that know it prefer, so that showing a
	// preview neither depends on nor tells the author's host.
	RegistryURL string `json:"registry_url,omitempty"`
}

// Signing is an entry's signature policy. Required refuses unsigned releases; a present
// signature is always verified against Sigstore (when set) or Ed25519Keys.
//
// A signing block that names neither sigstore nor ed25519_keys gets the default sigstore
// identity (the entry's repository, any workflow, any ref, the GitHub Actions issuer), so
// that `signing: {required: true}` means "signed by a workflow of this repository".
type Signing struct {
	Required    bool
	Sigstore    *SigstoreIdentity
	Ed25519Keys []string // base64 of 32-byte public keys
}

// SigstoreIdentity is the certificate identity a Sigstore bundle must carry. Workflow and
// Ref are empty when any is accepted; Ref may be a glob such as "refs/tags/v*".
type SigstoreIdentity struct {
	Repository string
	Workflow   string
	Ref        string
	Issuer     string
}

// Plugin returns the entry with the given id.
func (l *List) Plugin(id string) (*Entry, bool) {
	if l == nil {
		return nil, false
	}
	if len(l.Plugins) >= pluginIndexMin {
		if i, ok := l.pluginIndex()[id]; ok && i < len(l.Plugins) && l.Plugins[i].ID == id {
			return &l.Plugins[i], true
		}
	}
	for i := range l.Plugins { // a small list, an id it does not hold, or a list changed since
		if l.Plugins[i].ID == id {
			return &l.Plugins[i], true
		}
	}
	return nil, false
}

// pluginIndexMin is the list size from which Plugin finds a listed id through an index: a
// publish asks for its entry several times, and at 50,000 entries each linear search read
// about 0.1 ms of ids.
const pluginIndexMin = 256

// pluginIndex is the position of each plugin id's first entry in one list, as its plugins
// were when it was made: a list is not changed in place once asked (lists are loaded, then
// read). Plugin checks the id at the position it finds, so even a list changed in place
// never answers an entry of another id. Only the last list asked keeps its index (the list
// in force, in serve).
type pluginIndex struct {
	list *List
	n    int
	pos  map[string]int
}

var lastPluginIndex atomic.Pointer[pluginIndex]

func (l *List) pluginIndex() map[string]int {
	if pi := lastPluginIndex.Load(); pi != nil && pi.list == l && pi.n == len(l.Plugins) {
		return pi.pos
	}
	pos := make(map[string]int, len(l.Plugins))
	for i := range l.Plugins {
		if _, dup := pos[l.Plugins[i].ID]; !dup {
			pos[l.Plugins[i].ID] = i
		}
	}
	lastPluginIndex.Store(&pluginIndex{list: l, n: len(l.Plugins), pos: pos})
	return pos
}

// Extension returns the extension entry with the given name.
func (l *List) Extension(name string) (*ExtensionEntry, bool) {
	if l == nil {
		return nil, false
	}
	for i := range l.Extensions {
		if l.Extensions[i].Name == name {
			return &l.Extensions[i], true
		}
	}
	return nil, false
}

// ByRepo returns the plugin ids and extension names whose repo is repo ("owner/name"), as
// GitHub resolves it: the owner compared case-insensitively, the name exactly. Trusted
// publishing maps a CI token's repository claim to what it may publish with this.
func (l *List) ByRepo(repo string) (ids, extensions []string) {
	if l == nil {
		return nil, nil
	}
	for _, e := range l.Plugins {
		if sameRepo(e.Repo, repo) {
			ids = append(ids, e.ID)
		}
	}
	for _, e := range l.Extensions {
		if sameRepo(e.Repo, repo) {
			extensions = append(extensions, e.Name)
		}
	}
	return ids, extensions
}

func sameRepo(a, b string) bool {
	ao, an, _ := strings.Cut(a, "/")
	bo, bn, _ := strings.Cut(b, "/")
	return an != "" && an == bn && strings.EqualFold(ao, bo)
}

// LoadList reads and parses the registry list at path. The error is for I/O only; every
// finding is in the problem list, with File set to path. The list is nil when the file
// cannot be decoded at all.
func LoadList(path string) (*List, problem.List, error) {
	data, err := readList(path)
	if err != nil {
		return nil, nil, err
	}
	l, probs := listOf(data)
	return l, probs.InFile(path), nil
}

// readList reads the list file at path, at most maxListSize bytes.
func readList(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("index: load list: %w", err)
	}
	defer func() { _ = f.Close() }() // read-only: a close error loses nothing
	data, err := io.ReadAll(io.LimitReader(f, maxListSize+1))
	if err != nil {
		return nil, fmt.Errorf("index: read %s: %w", path, err)
	}
	if len(data) > maxListSize {
		return nil, fmt.Errorf("index: read %s: %w", path, errTooLarge)
	}
	return data, nil
}

// listOf is LoadList of a list's bytes, its problems not yet in a file.
func listOf(data []byte) (*List, problem.List) {
	l, probs, root := parseList(data)
	if l != nil {
		probs = append(probs, checkFileIDs(rootPositions(root), l)...)
	}
	return l, probs
}

// CheckFileIDs refuses two entries of any kind that map to the same file id
// (extension.FileID): "@acme/hello" and a plugin "acme-hello" would both be served at
// /packages/acme-hello/acme-hello-<version>.tar.gz, so one of the two index entries could
// never match its sha256. data is the list's source, read again only for the entries' lines.
func CheckFileIDs(data []byte, l *List) problem.List {
	if l == nil {
		return nil
	}
	return checkFileIDs(entryPositions(data), l)
}

// checkFileIDs is CheckFileIDs with the entries' positions already found.
func checkFileIDs(lines positions, l *List) problem.List {
	var probs problem.List
	first := make(map[string]listed, len(l.Plugins)+len(l.Extensions))
	add := func(e listed) {
		prev, dup := first[e.fileID]
		if !dup {
			first[e.fileID] = e
			return
		}
		probs = append(probs, problem.Problem{Rule: "registry.file_id.collision", Severity: problem.Error,
			Path: fmt.Sprintf("%s (line %d, column %d)", e.pos.path(), e.pos.line, e.pos.column),
			Message: fmt.Sprintf("%s %q and %s %q (%s, line %d) share the file id %q: both would be served at /packages/%s/%s-<version>.tar.gz. "+
				"Rename one of them (ids and file ids must be unique across plugins and extensions)",
				e.kind, e.name, prev.kind, prev.name, prev.pos.path(), prev.pos.line, e.fileID, e.fileID, e.fileID)})
	}
	for _, e := range l.Plugins {
		add(listed{kind: "plugin", name: e.ID, fileID: extension.FileID(e.ID), pos: lines.plugins[e.ID]})
	}
	for _, e := range l.Extensions {
		add(listed{kind: "extension", name: e.Name, fileID: extension.FileID(e.Name), pos: lines.extensions[e.Name]})
	}
	return append(probs, versionSuffixes(first)...)
}

// versionSuffixes warns of a file id that is another listed file id plus "-<version>" (kit
// and kit-1.0.0): a package file name such as kit-1.0.0-0.1.0.tar.gz then reads as either
// (kit@1.0.0-0.1.0 or kit-1.0.0@0.1.0). Publishing still works, the registry tries both
// and the package's manifest decides, but people reading the name cannot tell them apart.
func versionSuffixes(byFileID map[string]listed) problem.List {
	var probs problem.List
	for fileID, e := range byFileID {
		for i := 0; i < len(fileID); i++ {
			if fileID[i] != '-' || !version.Valid(fileID[i+1:]) {
				continue
			}
			prev, ok := byFileID[fileID[:i]]
			if !ok {
				continue
			}
			probs = append(probs, problem.Problem{Rule: "registry.file_id.version_suffix", Severity: problem.Warning,
				Path: fmt.Sprintf("%s (line %d, column %d)", e.pos.path(), e.pos.line, e.pos.column),
				Message: fmt.Sprintf("%s %q is %s %q (%s, line %d) plus \"-%s\": a file name such as %s-0.1.0.tar.gz reads as %s@%s-0.1.0 or %s@0.1.0. "+
					"The registry tries both and the package's manifest decides, but people cannot tell them apart; rename %q to an id that does not end in \"-<version>\" if you can",
					e.kind, e.name, prev.kind, prev.name, prev.pos.path(), prev.pos.line, fileID[i+1:], fileID, prev.fileID, fileID[i+1:], fileID, e.name)})
		}
	}
	slices.SortFunc(probs, func(a, b problem.Problem) int { return strings.Compare(a.Path, b.Path) })
	return probs
}

// listed is one entry as CheckFileIDs compares them.
type listed struct {
	kind, name, fileID string
	pos                position
}

// position is where an entry's id or name is written.
type position struct {
	section, key string // plugins, id
	item         int    // 2 in plugins[2].id
	line, column int
}

// path is the entry's field path, plugins[2].id.
func (p position) path() string { return fmt.Sprintf("%s[%d].%s", p.section, p.item, p.key) }

type positions struct{ plugins, extensions map[string]position }

// entryPositions finds the first position of every plugins[].id and extensions[].name.
// Decoding into a yaml.Node does not expand aliases, so this is linear in len(data).
func entryPositions(data []byte) positions {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return rootPositions(nil)
	}
	return rootPositions(doc.Content[0])
}

// rootPositions finds the first position of every plugins[].id and extensions[].name under
// the document's root node (nil, or not a mapping: none).
func rootPositions(root *yaml.Node) positions {
	var out positions
	if root != nil && root.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(root.Content); i += 2 {
			switch v := root.Content[i+1]; root.Content[i].Value {
			case "plugins":
				out.plugins = collectPositions(out.plugins, v, "plugins", "id")
			case "extensions":
				out.extensions = collectPositions(out.extensions, v, "extensions", "name")
			}
		}
	}
	return out
}

// collectPositions adds to into (made when nil, sized for seq) the first position of every
// key of the mappings in seq, and returns it.
func collectPositions(into map[string]position, seq *yaml.Node, section, key string) map[string]position {
	if seq.Kind != yaml.SequenceNode {
		return into
	}
	if into == nil {
		into = make(map[string]position, len(seq.Content))
	}
	for i, item := range seq.Content {
		if item.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(item.Content); j += 2 {
			v := item.Content[j+1]
			if item.Content[j].Value != key || v.Kind != yaml.ScalarNode {
				continue
			}
			if _, seen := into[v.Value]; !seen {
				into[v.Value] = position{section: section, key: key, item: i, line: v.Line, column: v.Column}
			}
		}
	}
	return into
}

var errTooLarge = errors.New("file larger than 8 MiB")

var (
	fieldPositionRE = regexp.MustCompile(`^(.+) \(line (\d+), column (\d+)\)$`)
	docPositionRE   = regexp.MustCompile(`^()line (\d+), column (\d+)$`)
)

// Position splits a problem path of this package ("plugins[0].repo (line 3, column 11)")
// into the field path and the position. ok is false when path carries no position.
func Position(path string) (field string, line, column int, ok bool) {
	m := fieldPositionRE.FindStringSubmatch(path)
	if m == nil {
		m = docPositionRE.FindStringSubmatch(path)
	}
	if m == nil {
		return path, 0, 0, false
	}
	line, _ = strconv.Atoi(m[2])
	column, _ = strconv.Atoi(m[3])
	return m[1], line, column, true
}

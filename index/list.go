package index

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/pluginyard/registry/problem"
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
}

// Preview is one listing image: an absolute https URL and its alternative text.
type Preview struct {
	URL string `json:"url"`
	Alt string `json:"alt"`
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
	for i := range l.Plugins {
		if l.Plugins[i].ID == id {
			return &l.Plugins[i], true
		}
	}
	return nil, false
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
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("index: load list: %w", err)
	}
	defer func() { _ = f.Close() }() // read-only: a close error loses nothing
	data, err := io.ReadAll(io.LimitReader(f, maxListSize+1))
	if err != nil {
		return nil, nil, fmt.Errorf("index: read %s: %w", path, err)
	}
	if len(data) > maxListSize {
		return nil, nil, fmt.Errorf("index: read %s: %w", path, errTooLarge)
	}
	l, probs := ParseList(data)
	return l, probs.InFile(path), nil
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

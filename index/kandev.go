package index

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// SchemaVersion is the only index schema version hosts accept.
const SchemaVersion = 1

// MaxKandevSize is the Kandev host's cap on an index.json body (contract §1).
const MaxKandevSize = 5 << 20

// TimeFormat is the one format of every timestamp in the documents: RFC 3339, UTC, whole
// seconds. Hosts sort "recent" by string comparison, so one format keeps that order right.
const TimeFormat = "2006-01-02T15:04:05Z"

// ErrTooLarge is returned (wrapped) by BuildKandev when the document would exceed
// MaxKandevSize, which every Kandev host would refuse; keep the previous document instead.
var ErrTooLarge = errors.New("index: document exceeds the 5 MiB host limit")

// Snapshot is everything an index document is built from: the caller maps its store rows,
// manifests and verification results into these plain values.
type Snapshot struct {
	Serial      int64     // grows with every change of the catalog
	GeneratedAt time.Time // required; the caller's clock, so that output is reproducible
	Source      Source
	Plugins     []Plugin
	Extensions  []Extension
}

// Source is the self-description of a Kandev document.
type Source struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// Plugin is one Kandev index entry: the latest listed release of a plugin or canvas.
// Empty optional strings are emitted as null where the contract allows null (IconURL,
// MinKandevVersion, PackageSHA256); a zero UpdatedAt is null.
type Plugin struct {
	ID               string
	Kind             string // "plugin" (default when empty) or "canvas"
	Name             string // empty: the id humanized
	Description      string
	Author           string
	Categories       []string
	IconURL          string
	RepoURL          string
	Version          string
	MinKandevVersion string
	License          string // omitted when empty
	PackageURL       string
	PackageSHA256    string
	Publisher        *Publisher   // nil: omitted
	Permissions      *Permissions // nil: omitted
	Previews         []Preview
	Stars            *int // nil: null (unknown), never a made-up 0
	UpdatedAt        time.Time
	Downloads        int64
	Signature        *Signature // nil: null
	Featured         bool
	Official         bool
	VersionsURL      string       // omitted when empty
	Deprecated       *Deprecation // nil: null
	// Archived: its owner expects no more releases; it stays installable (an additive
	// field, emitted only when true).
	Archived bool
	// APIVersion is the manifest's api_version (0: omitted); Platforms the "<goos>-<goarch>"
	// of its executables (never null; empty: no executable, a UI or web-app-only package).
	// Both are additive, for hosts that filter by what they can install.
	APIVersion int
	Platforms  []string
}

// Publisher is Kandev's publisher evidence, emitted with schema_version 1. The ids are the
// decimal GitHub repository and owner ids from the signing certificate.
type Publisher struct {
	RepositoryID string
	OwnerID      string
	Login        string
	Repository   string // "owner/name"
	Official     bool
}

// Permissions is a canvas's permission summary as Kandev hosts read it. SharedState is a
// boolean on the wire (the host decodes it as one); the lists are never null.
type Permissions struct {
	Reads           []string
	Writes          []string
	Events          []string
	SharedState     bool
	ExternalOrigins []string
}

// Signature summarises a release's verified signature (an additive field).
type Signature struct {
	Type           string // "sigstore" or "ed25519"
	Identity       string // certificate SAN, or the key fingerprint for ed25519
	Issuer         string
	Repository     string
	Workflow       string
	Ref            string
	CommitSHA      string
	LogIndex       int64 // emitted for sigstore only
	IntegratedTime time.Time
}

// Deprecation marks a plugin as deprecated, optionally naming its replacement id.
type Deprecation struct {
	Reason      string `json:"reason"`
	Replacement string `json:"replacement"`
}

type kandevDoc struct {
	SchemaVersion int           `json:"schema_version"`
	GeneratedAt   string        `json:"generated_at"`
	Source        Source        `json:"source"`
	Serial        int64         `json:"serial"`
	Plugins       []kandevEntry `json:"plugins"`
}

// contractEntry is the fields of a Kandev entry the contract (§1) names, in its order:
// the full entry and the compact one (policy_encode.go) both begin with them.
type contractEntry struct {
	ID               string          `json:"id"`
	Kind             string          `json:"kind"`
	Name             string          `json:"name"`
	Description      string          `json:"description"`
	Author           string          `json:"author"`
	Categories       []string        `json:"categories"`
	IconURL          *string         `json:"icon_url"`
	RepoURL          string          `json:"repo_url"`
	Version          string          `json:"version"`
	MinKandevVersion *string         `json:"min_kandev_version"`
	License          string          `json:"license,omitempty"`
	PackageURL       string          `json:"package_url"`
	PackageSHA256    *string         `json:"package_sha256"`
	Publisher        *publisherJSON  `json:"publisher,omitempty"`
	Permissions      *permissionJSON `json:"permissions,omitempty"`
	Previews         []Preview       `json:"previews"`
	Stars            *int            `json:"stars"`
	UpdatedAt        *string         `json:"updated_at"`
}

// kandevEntry is a full entry: the contract's fields, then the registry's additive ones.
type kandevEntry struct {
	contractEntry
	Downloads   int64          `json:"downloads"`
	Signature   *signatureJSON `json:"signature"`
	Featured    bool           `json:"featured"`
	Official    bool           `json:"official"`
	VersionsURL string         `json:"versions_url,omitempty"`
	Deprecated  *Deprecation   `json:"deprecated"`
	Archived    bool           `json:"archived,omitempty"`
	APIVersion  int            `json:"api_version,omitempty"`
	Platforms   []string       `json:"platforms"`
}

type publisherJSON struct {
	SchemaVersion int    `json:"schema_version"`
	RepositoryID  string `json:"repository_id"`
	OwnerID       string `json:"owner_id"`
	Login         string `json:"login"`
	Repository    string `json:"repository"`
	Official      bool   `json:"official"`
}

type permissionJSON struct {
	Reads           []string `json:"reads"`
	Writes          []string `json:"writes"`
	Events          []string `json:"events"`
	SharedState     bool     `json:"shared_state"`
	ExternalOrigins []string `json:"external_origins"`
}

type signatureJSON struct {
	Type           string  `json:"type"`
	Identity       string  `json:"identity"`
	Issuer         string  `json:"issuer"`
	Repository     string  `json:"repository"`
	Workflow       string  `json:"workflow"`
	Ref            string  `json:"ref"`
	CommitSHA      string  `json:"commit_sha"`
	LogIndex       *int64  `json:"log_index"`
	IntegratedTime *string `json:"integrated_time"`
}

// BuildKandev renders the Kandev /index.json document (contract §1): schema_version 1,
// plugins sorted by id and never null, categories and previews never null, one timestamp
// format, compact JSON, identical bytes for equal input. It refuses input a host could not
// read as intended: a zero GeneratedAt, an empty or duplicate id, an unknown kind, and a
// document over MaxKandevSize (ErrTooLarge). Entries that a host would drop for their
// previews or digest are rendered as given; CheckKandev reports them.
func BuildKandev(s Snapshot) ([]byte, error) {
	if s.GeneratedAt.IsZero() {
		return nil, errors.New("index: build kandev: GeneratedAt is zero")
	}
	doc := kandevDoc{
		SchemaVersion: SchemaVersion,
		GeneratedAt:   formatTime(s.GeneratedAt),
		Source:        s.Source,
		Serial:        s.Serial,
		Plugins:       make([]kandevEntry, 0, len(s.Plugins)),
	}
	for _, p := range s.Plugins {
		e, err := kandevEntryOf(p)
		if err != nil {
			return nil, fmt.Errorf("index: build kandev: %w", err)
		}
		doc.Plugins = append(doc.Plugins, e)
	}
	sort.Slice(doc.Plugins, func(i, j int) bool { return doc.Plugins[i].ID < doc.Plugins[j].ID })
	for i := 1; i < len(doc.Plugins); i++ {
		if doc.Plugins[i].ID == doc.Plugins[i-1].ID {
			return nil, fmt.Errorf("index: build kandev: plugin id %q appears twice", doc.Plugins[i].ID)
		}
	}
	out, err := marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("index: build kandev: %w", err)
	}
	if len(out) > MaxKandevSize {
		return nil, fmt.Errorf("index: build kandev: %d bytes: %w", len(out), ErrTooLarge)
	}
	return out, nil
}

func kandevEntryOf(p Plugin) (kandevEntry, error) {
	kind := p.Kind
	if kind == "" {
		kind = KindPlugin
	}
	switch {
	case p.ID == "":
		return kandevEntry{}, errors.New("a plugin has an empty id")
	case kind != KindPlugin && kind != KindCanvas:
		return kandevEntry{}, fmt.Errorf("plugin %q has the unknown kind %q", p.ID, kind)
	}
	name := p.Name
	if name == "" {
		name = Humanize(p.ID)
	}
	return kandevEntry{
		contractEntry: contractEntry{ID: p.ID, Kind: kind, Name: name, Description: p.Description, Author: p.Author,
			Categories: nonNil(p.Categories), IconURL: nullable(p.IconURL), RepoURL: p.RepoURL,
			Version: p.Version, MinKandevVersion: nullable(p.MinKandevVersion), License: p.License,
			PackageURL: p.PackageURL, PackageSHA256: nullable(p.PackageSHA256),
			Publisher: publisherOf(p.Publisher), Permissions: permissionsOf(p.Permissions),
			Previews: nonNil(p.Previews), Stars: p.Stars, UpdatedAt: nullableTime(p.UpdatedAt)},
		Downloads: p.Downloads, Signature: signatureOf(p.Signature),
		Featured: p.Featured, Official: p.Official, VersionsURL: p.VersionsURL,
		Deprecated: p.Deprecated, Archived: p.Archived, APIVersion: p.APIVersion, Platforms: nonNil(p.Platforms),
	}, nil
}

func publisherOf(p *Publisher) *publisherJSON {
	if p == nil {
		return nil
	}
	return &publisherJSON{SchemaVersion: 1, RepositoryID: p.RepositoryID, OwnerID: p.OwnerID,
		Login: p.Login, Repository: p.Repository, Official: p.Official}
}

func permissionsOf(p *Permissions) *permissionJSON {
	if p == nil {
		return nil
	}
	return &permissionJSON{Reads: nonNil(p.Reads), Writes: nonNil(p.Writes), Events: nonNil(p.Events),
		SharedState: p.SharedState, ExternalOrigins: nonNil(p.ExternalOrigins)}
}

func signatureOf(s *Signature) *signatureJSON {
	if s == nil {
		return nil
	}
	out := &signatureJSON{Type: s.Type, Identity: s.Identity, Issuer: s.Issuer, Repository: s.Repository,
		Workflow: s.Workflow, Ref: s.Ref, CommitSHA: s.CommitSHA, IntegratedTime: nullableTime(s.IntegratedTime)}
	if s.Type == "sigstore" {
		idx := s.LogIndex
		out.LogIndex = &idx
	}
	return out
}

// Humanize turns an id into a display name: "agent-stats" → "Agent Stats". Hyphens and
// underscores separate words; each word's first letter is upper-cased.
func Humanize(id string) string {
	words := strings.FieldsFunc(id, func(r rune) bool { return r == '-' || r == '_' })
	for i, w := range words {
		r, size := utf8.DecodeRuneInString(w)
		words[i] = string(unicode.ToUpper(r)) + w[size:]
	}
	return strings.Join(words, " ")
}

func formatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

func nullableTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := formatTime(t)
	return &s
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// marshal renders v as compact JSON without HTML escaping (the documents are served as
// application/json, and URLs with '&' stay readable) and without a trailing newline.
func marshal(v any) ([]byte, error) {
	seg, err := marshalSegment(v)
	return seg[min(len(seg), 1):], err
}

// marshalSegment is "," + marshal(v) (form.seg), made in one buffer: a start encodes every
// entry, and copying each behind a comma would copy the catalogue once more.
func marshalSegment(v any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte(',')
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

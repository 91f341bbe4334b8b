package web

import "strings"

// Kinds of package a card or page can describe.
const (
	KindPlugin    = "plugin"
	KindCanvas    = "canvas"
	KindExtension = "extension"
)

// Sort orders the home page offers; the values are the API's sort parameter.
const (
	SortRelevance = "relevance"
	SortRecent    = "recent"
	SortName      = "name"
	SortDownloads = "downloads"
)

// Meta is the per-page information the layout puts in <head> and the header.
type Meta struct {
	// SiteName names the registry in titles and the header; "" means "Plugin registry".
	SiteName string
	// Title is the page's own title, without the site name.
	Title string
	// Description feeds <meta name="description">.
	Description string
	// CanonicalURL is the absolute URL of the page (omitted when "").
	CanonicalURL string
	// NavQuery pre-fills the header search box.
	NavQuery string
	// NoIndex asks search engines not to index the page (error pages).
	NoIndex bool
	// PageSearch: the page has its own search form (the home page), so the header leaves
	// its search box out and the page has one.
	PageSearch bool
}

// Card is one package in a list: a plugin, a canvas or a Curupira extension.
type Card struct {
	ID          string
	Kind        string // KindPlugin, KindCanvas or KindExtension
	Name        string
	Author      string
	Description string
	Version     string
	IconURL     string // "" draws a letter tile
	Verified    bool   // the latest release's signature verified against the listed identity
	Official    bool
	Downloads   int64
	Categories  []string
	URL         string // the package's page, e.g. /plugins/{id}
	// Publisher is the curated owner (plugins.yaml owners[0]) whose page lists the package;
	// Author is what the manifest says.
	Publisher  string
	Deprecated bool // its owner deprecated the package
	// YankedVersion is the newest version when it was yanked (the card shows the one
	// before it); "" when the newest version is listed.
	YankedVersion string
}

// CategoryCount is one category filter with the number of packages in it.
type CategoryCount struct {
	Name    string
	Count   int
	AtLeast bool // a text search stopped counting: Count is a lower bound, shown "n+"
}

// countText is the count a category filter shows.
func countText(c CategoryCount) string {
	if c.AtLeast {
		return fullCount(c.Count) + "+"
	}
	return fullCount(c.Count)
}

// homeHeading is the results heading; a total that is a lower bound reads "1,000+ results".
func homeHeading(p HomePage) string {
	h := resultsHeading(p)
	if p.TotalMore {
		h = strings.Replace(h, resultsWord(p.Total), fullCount(p.Total)+"+ results", 1)
	}
	return h
}

// homeRange is "1–24 of 1,000" (of "1,000+" when the total is a lower bound).
func homeRange(p HomePage) string {
	r := rangeText(p.Page, p.PerPage, p.Total, len(p.Cards))
	if p.TotalMore {
		r += "+"
	}
	return r
}

// HomePage is the search and browse page at /.
type HomePage struct {
	Meta       Meta
	Sources    SourceList // shown when index.json is partial: the shard URLs to add
	Query      string
	Kind       string // "" for every kind
	Category   string
	Sort       string
	Cards      []Card
	Featured   []Card // shown above the results when non-empty
	Categories []CategoryCount
	Total      int
	TotalMore  bool // a text search stopped counting at Total: there are more
	Page       int  // 1-based
	PerPage    int
	PrevURL    string
	NextURL    string
}

// Preview is one screenshot from plugins.yaml.
type Preview struct {
	URL string
	Alt string
}

// Permission is one capability in plain words.
type Permission struct {
	Key    string // stable identifier, e.g. "secrets", "webhooks.public"
	Label  string
	Detail string
	Risky  bool
}

// VersionRow is one release in the versions table.
type VersionRow struct {
	Version string
	// Latest marks the release the index offers as the package's latest.
	Latest     bool
	CreatedAt  string // already formatted by the caller
	Size       int64
	SHA256     string
	Yanked     bool
	YankReason string
	URL        string // the package download URL
	// CuratedMax is the newest Kandev version an admin still offers this release to ("":
	// not curated), CuratedReason why (registry compat, docs/host-aware.md).
	CuratedMax, CuratedReason string
	// Quarantined marks a release an admin quarantined (its reason is on the page's banner).
	Quarantined bool
	// NotesHTML is this version's section of its CHANGELOG.md, rendered at publish.
	NotesHTML HTML
}

// Deprecation marks a package its owner no longer maintains.
type Deprecation struct {
	Reason      string
	Replacement string // an id or a URL; "" when none
	// ReplacementURL links the replacement when it is listed here.
	ReplacementURL string
}

// Install is what a person needs to install the latest release.
type Install struct {
	IndexURL   string // the index document a host adds as a source
	PackageURL string
	SHA256     string
	CurlCheck  string // a one-line command printing the package's sha256
}

// Checksums states, as recorded at publish.
const (
	// ChecksumsNotRecorded: the release predates the registry recording what it checked.
	ChecksumsNotRecorded = ""
	// ChecksumsVerified: checksums.txt listed every other file and each matched.
	ChecksumsVerified = "verified"
	// ChecksumsAbsent: the package has no checksums.txt (allowed for extensions).
	ChecksumsAbsent = "absent"
)

// Verification is what the registry checked about the latest release, from the facts it
// recorded when the release was published.
type Verification struct {
	Checksums      string // ChecksumsVerified, ChecksumsAbsent or ChecksumsNotRecorded
	ChecksumFiles  int    // files checksums.txt lists (ChecksumsVerified only)
	SignatureType  string // "sigstore", "ed25519" or "" when unsigned
	SAN            string
	Issuer         string
	Repository     string // owner/name
	Workflow       string
	Ref            string
	CommitSHA      string
	RunURL         string
	KeyFingerprint string // ed25519 only
	LogIndex       *int64
	IntegratedTime string
	// RegistryLog is the latest release's publish record in this registry's transparency
	// log; nil when the log has none.
	RegistryLog *LogEntry
}

// LogEntry points at a publish record: "recorded in the log at #Index", linking to URL
// (GET /log/lookup/{id}@{version}).
type LogEntry struct {
	Index int64
	URL   string
}

// PluginPage is the page of a plugin or a canvas at /plugins/{id}.
type PluginPage struct {
	Meta             Meta
	Card             Card
	PublisherURL     string // the publisher page; "" when unknown
	READMEHTML       HTML
	Previews         []Preview
	Permissions      []Permission
	Versions         []VersionRow
	Deprecated       *Deprecation
	Install          Install
	Verification     Verification
	RepoURL          string
	License          string
	MinKandevVersion string
	Quarantined      []QuarantineNotice // the quarantines in force (quarantine.go)
	Archived         *Archived          // nil while active (archived.go)
	UpdatedAt        string
	Warnings         []string
	RunsOn           RunsOn
	Settings         []Setting // config_schema fields
	ChangelogHTML    HTML      // the latest release's CHANGELOG.md, rendered at publish
	Downloads        DownloadChart
	Repo             RepoStats
	Reports          ReportSection // resolved reports that led to an action, and the report form
}

// ExtensionPage is the page of a Curupira trigger extension at /extensions/{name}.
type ExtensionPage struct {
	Meta            Meta
	Card            Card
	PublisherURL    string
	TriggerTypes    []string
	Runtime         string
	ProtocolVersion int
	LaunchCommand   string // e.g. "npx -y @acme/ext@1.2.0"
	READMEHTML      HTML
	Versions        []VersionRow
	Deprecated      *Deprecation
	Install         Install
	Verification    Verification
	RepoURL         string
	License         string
	UpdatedAt       string
	Warnings        []string
	RunsOn          RunsOn // from the [launch] type
	ChangelogHTML   HTML
	Downloads       DownloadChart
	Repo            RepoStats
	Quarantined     []QuarantineNotice // the quarantines in force (quarantine.go)
	Archived        *Archived          // nil while active (archived.go)
	Reports         ReportSection      // resolved reports that led to an action, and the report form
}

// PublisherPage lists everything one publisher maintains, at /publishers/{name}.
type PublisherPage struct {
	Meta    Meta
	Name    string
	Repos   []string // GitHub repositories ("owner/name") the publisher releases from (the first few)
	Authors []string // the authors its packages' manifests name, shown as labels (the first few)
	// MoreRepos and MoreAuthors are how many were left out of Repos and Authors.
	MoreRepos, MoreAuthors int
	Cards                  []Card
	Total                  int
	Page                   int
	PerPage                int
	PrevURL                string
	NextURL                string
}

// CategoryPage lists one category, at /categories/{name}.
type CategoryPage struct {
	Meta       Meta
	Name       string
	Cards      []Card
	Categories []CategoryCount // every category, for moving between them
	Total      int
	Page       int
	PerPage    int
	PrevURL    string
	NextURL    string
}

// Docs sections.
const (
	DocsIndex     = ""
	DocsAuthors   = "authors"
	DocsOperators = "operators"
)

// DefaultAction is the `uses:` reference of the publishing GitHub Action.
const DefaultAction = "pluginyard/registry@v1"

// DocsPage is a documentation page at /docs, /docs/authors or /docs/operators.
type DocsPage struct {
	Meta Meta
	// Section is DocsIndex, DocsAuthors or DocsOperators.
	Section string
	// PublicURL is this registry's public base URL, without a trailing slash;
	// the examples use it.
	PublicURL string
	// Action is the `uses:` reference of the publishing Action; "" means DefaultAction.
	Action string
	// Sources are the source URLs to add to a host (index.json, and its shards when partial).
	Sources SourceList
}

// ErrorPage is a helpful 404 or a 500.
type ErrorPage struct {
	Meta   Meta
	Status int // 404, 500, ...
	// Message is a short, safe sentence for the reader; "" uses a default per status.
	Message string
	Query   string // what the reader was looking for, to pre-fill the search box
	// RequestID lets the reader quote the failure to an operator (500 only).
	RequestID string
}

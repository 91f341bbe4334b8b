package ingest

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/version"
)

// ErrBadQuery is a request whose parameters are malformed (400): a host version outside
// the SemVer grammar, a platform that is not <goos>-<goarch>.
var ErrBadQuery = errors.New("bad query")

// Host is the Kandev host a host-aware request is for.
type Host struct {
	Kandev   string    // the version as asked, canonical SemVer
	Version  version.V // Kandev parsed
	Platform string    // "<goos>-<goarch>", one of the Go toolchain's
}

// maxPlatformLen bounds a platform before it is looked up (the longest real one is 15).
const maxPlatformLen = 32

// ParseHost checks a host version (SemVer 2.0.0, version.Parse) and platform (a known
// <goos>-<goarch>); a *Refusal of kind ErrBadQuery with rule host.version or host.platform
// names what is wrong. Both are bounded before any work, and quoted shortened.
func ParseHost(kandev, platform string) (Host, error) {
	v, err := version.Parse(kandev)
	if err != nil {
		fix := ""
		if n := version.Nearest(kandev); n != "" && n != kandev && len(kandev) <= version.MaxLen {
			fix = fmt.Sprintf(" (did you mean %q?)", n)
		}
		return Host{}, refuseOne(ErrBadQuery, "host.version", "kandev", "the Kandev version %q is not a SemVer version: %v; give the host's version as MAJOR.MINOR.PATCH, such as 0.91.0%s",
			truncateQuote(kandev), err, fix)
	}
	if err := checkPlatform(platform); err != nil {
		return Host{}, err
	}
	return Host{Kandev: v.String(), Version: v, Platform: platform}, nil
}

func checkPlatform(p string) error {
	switch {
	case p == "":
		return refuseOne(ErrBadQuery, "host.platform", "platform", "the platform is empty; give the host's <goos>-<goarch>, such as linux-amd64 or darwin-arm64")
	case len(p) > maxPlatformLen:
		return refuseOne(ErrBadQuery, "host.platform", "platform", "the platform is %d bytes, at most %d; give the host's <goos>-<goarch>, such as linux-amd64", len(p), maxPlatformLen)
	case !manifest.KnownPlatform(p):
		return refuseOne(ErrBadQuery, "host.platform", "platform", "%q is not a <goos>-<goarch> of the Go toolchain (go tool dist list); give the host's, such as linux-amd64, darwin-arm64 or windows-amd64", truncateQuote(p))
	}
	return nil
}

// Reason codes: why a release is not installable on a host (Verdict.Reasons).
const (
	ReasonYanked         = "yanked"                     // the release is yanked
	ReasonDamaged        = "damaged"                    // its stored package is damaged: it cannot be downloaded
	ReasonQuarantined    = "quarantined"                // an admin quarantined the release or its package (quarantine.go)
	ReasonNoPlugins      = "host_without_plugins"       // the host version has no plugin system
	ReasonAPIVersion     = "api_version"                // the host does not accept the manifest's api_version
	ReasonMinKandev      = "min_kandev_version"         // the manifest needs a newer host
	ReasonMinKandevBad   = "min_kandev_version_invalid" // the manifest's min_kandev_version is no release version
	ReasonPlatform       = "platform"                   // a managed plugin without an executable for the platform
	ReasonCanvas         = "canvas"                     // the host does not install canvases
	ReasonCuratedMax     = "curated_max_kandev"         // an admin narrowed the release to older hosts
	ReasonNotKandev      = "not_kandev"                 // a Curupira extension: not for Kandev hosts
	ReasonLegacyVersion  = "version_outside_grammar"    // a release stored before the version grammar
	ReasonNotNewer       = "not_newer"                  // upgrade: at or below the installed version
	ReasonInstalledNewer = "installed_newest"           // upgrade: the installed version is the newest published
	ReasonUnpublished    = "newer_than_published"       // upgrade: the installed version is newer than every published one
)

// Reason is one reason a release is not installable.
type Reason struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Verdict is whether one release is installable on a host, and why not.
type Verdict struct {
	Version          string          `json:"version"`
	Kind             string          `json:"kind"`
	Installable      bool            `json:"installable"`
	Reasons          []Reason        `json:"reasons"`
	APIVersion       int             `json:"api_version,omitempty"`
	MinKandevVersion string          `json:"min_kandev_version,omitempty"`
	Platforms        []string        `json:"platforms"`
	Curated          *store.Curation `json:"curated,omitempty"`
	Yanked           bool            `json:"yanked"`
}

// relEntry is one stored release with the facts compatibility needs, parsed once.
type relEntry struct {
	rel     *store.Release
	card    *store.Card
	min     version.V // the manifest's min_kandev_version, as a release version
	minSet  bool      // the manifest has one
	minBad  bool      // it has one, but it is no release version
	cur     *store.Curation
	max     version.V // cur.MaxKandev parsed
	invalid bool      // the release's own version is outside the grammar
	quar    *store.Quarantine
}

func newRelEntry(r *store.Release, c *store.Card, cur *store.Curation) *relEntry {
	e := &relEntry{rel: r, card: c, invalid: !version.Valid(r.Version)}
	if raw := c.MinKandevVersion; raw != "" {
		e.minSet = true
		e.min, e.minBad = releaseVersion(raw)
		e.minBad = !e.minBad
	}
	if cur != nil {
		if mv, err := version.Parse(cur.MaxKandev); err == nil {
			e.cur, e.max = cur, mv
		}
	}
	return e
}

// releaseVersion reads a min_kandev_version as Kandev hosts do: up to three dot-separated
// numbers, an optional leading "v", missing segments 0 ("v0.91" is 0.91.0).
func releaseVersion(raw string) (version.V, bool) {
	s := strings.TrimPrefix(strings.TrimPrefix(raw, "v"), "V")
	parts := strings.Split(s, ".")
	if len(parts) > 3 || len(raw) > version.MaxLen {
		return version.V{}, false
	}
	var n [3]uint64
	for i, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return version.V{}, false
		}
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return version.V{}, false
		}
		n[i] = v
	}
	return version.V{Major: n[0], Minor: n[1], Patch: n[2]}, true
}

// judge says whether e is installable on host h under caps; damaged reports a damaged blob.
func judge(e *relEntry, caps *HostCaps, h Host, damaged func(string) bool) Verdict {
	c := e.card
	v := Verdict{Version: e.rel.Version, Kind: c.Kind, APIVersion: c.APIVersion, MinKandevVersion: c.MinKandevVersion,
		Platforms: nonNilStrings(c.Platforms), Curated: e.cur, Yanked: e.rel.Yanked, Reasons: []Reason{}}
	add := func(code, format string, args ...any) {
		v.Reasons = append(v.Reasons, Reason{Code: code, Message: fmt.Sprintf(format, args...)})
	}
	if c.Kind == "extension" {
		add(ReasonNotKandev, "%s is a Curupira extension, not a Kandev plugin or canvas", e.rel.PackageID)
		return v
	}
	if e.rel.Yanked {
		add(ReasonYanked, "%s is yanked (%s); it stays downloadable by its exact URL but is offered to no host", e.rel.Version, orNone(e.rel.YankReason))
	}
	if q := e.quar; q != nil {
		add(ReasonQuarantined, "%s is quarantined by the registry's administrators: %s; it is offered to no host and cannot be downloaded", e.rel.Version, q.Reason)
	}
	if damaged(e.rel.SHA256) {
		add(ReasonDamaged, "the registry's copy of %s is damaged and cannot be downloaded until the operator restores it", e.rel.Version)
	}
	if e.invalid {
		add(ReasonLegacyVersion, "%q is outside the version grammar (published before it was enforced); hosts cannot order it", e.rel.Version)
	}
	row := &caps.Hosts[caps.Row(h.Version)]
	switch {
	case len(row.APIVersions) == 0:
		add(ReasonNoPlugins, "Kandev %s has no plugin system (capability row from %s accepts no api_version)", h.Kandev, row.From)
	case !row.Accepts(c.APIVersion):
		add(ReasonAPIVersion, "Kandev %s accepts api_version %s, the manifest declares %d (capability row from %s)", h.Kandev, joinInts(row.APIVersions), c.APIVersion, row.From)
	}
	if c.Kind == "canvas" && !row.Canvases {
		add(ReasonCanvas, "Kandev %s does not install canvases (capability row from %s)", h.Kandev, row.From)
	}
	switch {
	case e.minBad:
		add(ReasonMinKandevBad, "min_kandev_version %q is not a release version; hosts refuse it", truncateQuote(c.MinKandevVersion))
	case e.minSet && e.min.Compare(h.Version) > 0:
		add(ReasonMinKandev, "the manifest needs Kandev %s or newer (min_kandev_version %q); this host is %s", e.min, c.MinKandevVersion, h.Kandev)
	}
	if c.Kind != "canvas" && len(c.Platforms) > 0 && !slices.Contains(c.Platforms, h.Platform) {
		add(ReasonPlatform, "no executable for %s: the release ships %s", h.Platform, strings.Join(c.Platforms, ", "))
	}
	if e.cur != nil && h.Version.Compare(e.max) > 0 {
		add(ReasonCuratedMax, "curated for Kandev up to %s by %s: %s", e.cur.MaxKandev, e.cur.SetBy, e.cur.Reason)
	}
	v.Installable = len(v.Reasons) == 0
	return v
}

func orNone(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

func joinInts(xs []int) string {
	if len(xs) == 0 {
		return "none"
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, " and ")
}

func nonNilStrings(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

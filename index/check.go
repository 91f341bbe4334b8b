package index

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/pluginyard/registry/problem"
)

// hostDoc and hostEntry mirror how a Kandev host decodes a document: a value of the wrong
// JSON type makes its decoder fail, and with it the whole source.
type hostDoc struct {
	SchemaVersion json.RawMessage `json:"schema_version"`
	GeneratedAt   json.RawMessage `json:"generated_at"`
	Source        *Source         `json:"source"`
	Plugins       json.RawMessage `json:"plugins"`
}

type hostEntry struct {
	ID               string    `json:"id"`
	Kind             string    `json:"kind"`
	Name             string    `json:"name"`
	Description      string    `json:"description"`
	Author           string    `json:"author"`
	Categories       []string  `json:"categories"`
	IconURL          string    `json:"icon_url"`
	RepoURL          string    `json:"repo_url"`
	Version          string    `json:"version"`
	MinKandevVersion string    `json:"min_kandev_version"`
	License          string    `json:"license"`
	PackageURL       string    `json:"package_url"`
	PackageSHA256    string    `json:"package_sha256"`
	Previews         []Preview `json:"previews"`
	Permissions      *struct {
		Reads           []string `json:"reads"`
		Writes          []string `json:"writes"`
		Events          []string `json:"events"`
		SharedState     bool     `json:"shared_state"`
		ExternalOrigins []string `json:"external_origins"`
	} `json:"permissions"`
	Publisher *struct {
		SchemaVersion int    `json:"schema_version"`
		RepositoryID  string `json:"repository_id"`
		OwnerID       string `json:"owner_id"`
		Login         string `json:"login"`
		Repository    string `json:"repository"`
		Official      bool   `json:"official"`
	} `json:"publisher"`
	Stars     *int   `json:"stars"`
	UpdatedAt string `json:"updated_at"`
}

// CheckKandev applies to a Kandev index document the checks a Kandev host applies when it
// reads one (contract §1), and a few that keep our own output honest. Document-level
// problems (size over 5 MiB, not JSON, a value of the wrong type, schema_version not exactly
// 1, plugins missing or null) make a host refuse the whole source; entry-level problems (an
// empty or duplicate id, an unknown kind, invalid previews, a canvas without previews or
// without a valid package_sha256, null categories, a malformed updated_at) make it drop the
// entry. Paths are JSON field paths such as "plugins[2].previews[0].url".
func CheckKandev(doc []byte) problem.List {
	var probs problem.List
	if len(doc) > MaxKandevSize {
		probs.Errorf("index.size", "", "expected at most %d bytes (the host's cap), found %d; hosts refuse the whole document", MaxKandevSize, len(doc))
	}
	var d hostDoc
	if err := json.Unmarshal(doc, &d); err != nil {
		probs.Errorf("index.json", "", "expected a JSON object, found a document the host cannot decode: %v", err)
		return probs
	}
	if string(bytes.TrimSpace(d.SchemaVersion)) != "1" {
		probs.Errorf("index.schema_version", "schema_version", "expected exactly 1, found %s; hosts refuse any other version", orMissing(d.SchemaVersion))
	}
	checkGeneratedAt(&probs, d.GeneratedAt)
	if d.Source == nil {
		probs.Warnf("index.source", "source", "expected a source object {name, url}, found none")
	}
	entries, ok := pluginsOf(&probs, d.Plugins)
	if !ok {
		return probs
	}
	seen := map[string]int{}
	for i, raw := range entries {
		checkEntry(&probs, fmt.Sprintf("plugins[%d]", i), raw, seen, i)
	}
	return probs
}

func orMissing(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	return string(raw)
}

func checkGeneratedAt(probs *problem.List, raw json.RawMessage) {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		probs.Errorf("index.generated_at", "generated_at", "expected an RFC 3339 UTC timestamp string, found %s", orMissing(raw))
		return
	}
	if !isTimestamp(s) {
		probs.Warnf("index.generated_at", "generated_at", "expected an RFC 3339 UTC timestamp like 2026-09-18T06:00:12Z, found %q", s)
	}
}

func pluginsOf(probs *problem.List, raw json.RawMessage) ([]json.RawMessage, bool) {
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		probs.Errorf("index.plugins.null", "plugins", "expected a plugins array (possibly empty), found %s; hosts refuse the document", orMissing(raw))
		return nil, false
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		probs.Errorf("index.json", "plugins", "expected an array of plugin objects, found %s", describeJSON(raw))
		return nil, false
	}
	return entries, true
}

func describeJSON(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}

// checkEntry checks one plugin entry the way the host does, plus our own output rules.
func checkEntry(probs *problem.List, path string, raw json.RawMessage, seen map[string]int, i int) {
	var e hostEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		probs.Errorf("index.json", path, "the host's decoder fails on this entry, and so on the whole document: %v", err)
		return
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(raw, &fields) // cannot fail: raw decoded as an object above
	switch prev, dup := seen[e.ID]; {
	case e.ID == "":
		probs.Errorf("index.plugin.id", path+".id", "expected a non-empty id; hosts drop the entry")
		return
	case dup:
		probs.Errorf("index.plugin.id.duplicate", path+".id", "id %q already appears at plugins[%d]; hosts drop the repetition", e.ID, prev)
		return
	}
	seen[e.ID] = i
	kind := e.Kind
	if kind == "" {
		kind = KindPlugin
	}
	if kind != KindPlugin && kind != KindCanvas {
		probs.Errorf("index.plugin.kind", path+".kind", "expected plugin or canvas, found %q; hosts drop the entry", e.Kind)
	}
	checkHostPreviews(probs, path+".previews", e.Previews, kind == KindCanvas)
	checkDigest(probs, path+".package_sha256", e.PackageSHA256, kind == KindCanvas)
	if c, ok := fields["categories"]; !ok || string(c) == "null" {
		probs.Errorf("index.plugin.categories", path+".categories", "expected a categories array (possibly empty), found %s; older hosts break on null", orMissing(c))
	}
	if u, ok := fields["updated_at"]; ok && string(u) != "null" && !isTimestamp(e.UpdatedAt) {
		probs.Errorf("index.plugin.updated_at", path+".updated_at", "expected an RFC 3339 UTC timestamp like 2026-09-18T06:00:12Z or null, found %q; hosts sort by string comparison", e.UpdatedAt)
	}
	checkOwn(probs, path, &e)
}

func checkHostPreviews(probs *problem.List, path string, previews []Preview, canvas bool) {
	if canvas && len(previews) == 0 {
		probs.Errorf("index.plugin.previews", path, "a canvas needs at least one preview; hosts drop the entry")
	}
	if len(previews) > MaxPreviews {
		probs.Errorf("index.plugin.previews", path, "expected at most %d previews, found %d; hosts drop the entry", MaxPreviews, len(previews))
	}
	for j, p := range previews {
		if msg := checkPreviewURL(p.URL); msg != "" {
			probs.Errorf("index.plugin.previews", fmt.Sprintf("%s[%d].url", path, j), "%s; hosts drop the entry", msg)
		}
		if msg := checkPreviewAlt(p.Alt); msg != "" {
			probs.Errorf("index.plugin.previews", fmt.Sprintf("%s[%d].alt", path, j), "%s; hosts drop the entry", msg)
		}
	}
}

func checkDigest(probs *problem.List, path, digest string, canvas bool) {
	switch {
	case digest == "" && canvas:
		probs.Errorf("index.plugin.package_sha256", path, "a canvas needs package_sha256 (64 lowercase hex digits); hosts drop the entry")
	case digest != "" && !isSHA256(digest):
		probs.Errorf("index.plugin.package_sha256", path, "expected 64 lowercase hex digits, found %q", digest)
	}
}

// checkOwn holds the rules hosts do not enforce when reading but that a usable entry needs.
func checkOwn(probs *problem.List, path string, e *hostEntry) {
	if e.Version == "" {
		probs.Errorf("index.plugin.version", path+".version", "expected the release version, found none; hosts cannot compare versions")
	}
	if !isHTTPURL(e.PackageURL) {
		probs.Errorf("index.plugin.package_url", path+".package_url", "expected an absolute http(s) URL that hosts install from, found %q", e.PackageURL)
	}
	if e.IconURL != "" && !isHTTPURL(e.IconURL) {
		probs.Errorf("index.plugin.icon_url", path+".icon_url", "expected an absolute http(s) URL or null, found %q", e.IconURL)
	}
	if e.Stars != nil && *e.Stars < 0 {
		probs.Errorf("index.plugin.stars", path+".stars", "expected a count of at least 0 or null, found %d", *e.Stars)
	}
	if p := e.Publisher; p != nil && (p.SchemaVersion != 1 || !isDecimal(p.RepositoryID) || !isDecimal(p.OwnerID)) {
		probs.Errorf("index.plugin.publisher", path+".publisher", "expected schema_version 1 and decimal repository_id and owner_id, found %d, %q, %q", p.SchemaVersion, p.RepositoryID, p.OwnerID)
	}
}

func isTimestamp(s string) bool {
	t, err := time.Parse(TimeFormat, s)
	return err == nil && t.Format(TimeFormat) == s
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func isDecimal(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/version"
)

// HostCap is what Kandev hosts from one version on can install, until the next row's From.
type HostCap struct {
	From        string `yaml:"from" json:"from"`                 // lowest host version of the row (SemVer)
	APIVersions []int  `yaml:"api_versions" json:"api_versions"` // manifest api_version values it accepts
	Canvases    bool   `yaml:"canvases" json:"canvases"`         // it installs canvases (kind: canvas)
	Note        string `yaml:"note,omitempty" json:"note,omitempty"`
	from        version.V
}

// HostCaps is the host capability table (docs/host-aware.md): rows sorted by From, the
// first from 0.0.0, so that every host version falls in exactly one row. The registry
// cannot ask a host what it supports, so the operator states it here.
type HostCaps struct {
	Hosts []HostCap `yaml:"hosts" json:"hosts"`
}

// MaxHostCaps bounds the rows of a capability table (each request looks one up).
const MaxHostCaps = 64

// MaxHostCapsBytes bounds a capability file.
const MaxHostCapsBytes = 64 << 10

// DefaultHostCaps is the table used without --host-caps, argued in docs/host-aware.md from
// the public Kandev code: the plugin system first shipped in v0.80.0 accepting api_version 1
// only, with a catalog that has no kind (canvases were listed as plugins), and so it stays
// through v0.91.0 and the main branch after it; a host that accepts api_version 2 and
// installs canvases is assumed from 0.92.0 on.
func DefaultHostCaps() *HostCaps {
	c, probs := parseHostCaps([]byte(defaultHostCapsYAML))
	if len(probs) > 0 {
		panic("ingest: the default host capability table is invalid: " + probs[0].Message)
	}
	return c
}

const defaultHostCapsYAML = `hosts:
  - from: "0.0.0"
    api_versions: []
    note: no plugin system before 0.80.0
  - from: "0.80.0"
    api_versions: [1]
    note: api_version 1 only (supportedAPIVersion = 1); the catalog has no kind, canvases are not installable
  - from: "0.92.0"
    api_versions: [1, 2]
    canvases: true
    note: api_version 1 and 2 (LegacyAPIVersion..CurrentAPIVersion), canvases (distribution kind canvas)
`

// ParseHostCaps parses and checks a capability table (YAML or JSON); it returns every
// problem found, each with its rule (host.caps.*), and a nil table when any is an error.
func ParseHostCaps(data []byte) (*HostCaps, problem.List) {
	if len(data) > MaxHostCapsBytes {
		var probs problem.List
		probs.Errorf("host.caps.parse", "", "the capability file is %d bytes, over the %d-byte limit; a table needs a few rows, one per host version that changed what it installs", len(data), MaxHostCapsBytes)
		return nil, probs
	}
	return parseHostCaps(data)
}

func parseHostCaps(data []byte) (*HostCaps, problem.List) {
	var (
		c     HostCaps
		probs problem.List
	)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		probs.Errorf("host.caps.parse", "", "the capability file does not parse: %v; expected hosts: [{from: \"0.80.0\", api_versions: [1], canvases: false}, …]", err)
		return nil, probs
	}
	checkHostCaps(&c, &probs)
	if len(probs) > 0 {
		return nil, probs
	}
	return &c, nil
}

func checkHostCaps(c *HostCaps, probs *problem.List) {
	switch {
	case len(c.Hosts) == 0:
		probs.Errorf("host.caps.from", "hosts", "expected at least one row, the first with from: \"0.0.0\", found none")
		return
	case len(c.Hosts) > MaxHostCaps:
		probs.Errorf("host.caps.from", "hosts", "expected at most %d rows, found %d; keep one row per host version that changed what it installs", MaxHostCaps, len(c.Hosts))
		return
	}
	valid := make([]bool, len(c.Hosts))
	for i := range c.Hosts {
		valid[i] = checkHostCap(&c.Hosts[i], fmt.Sprintf("hosts[%d]", i), probs)
	}
	if first := c.Hosts[0]; valid[0] && first.from.Compare(version.V{}) != 0 {
		probs.Errorf("host.caps.from", "hosts[0].from", "expected the first row from \"0.0.0\", found %q; hosts older than it would match no row: add a first row from \"0.0.0\" (api_versions: [] if they install nothing)", first.From)
	}
	for i := 1; i < len(c.Hosts); i++ {
		if valid[i] && valid[i-1] && c.Hosts[i].from.Compare(c.Hosts[i-1].from) <= 0 {
			probs.Errorf("host.caps.order", fmt.Sprintf("hosts[%d].from", i), "expected rows in increasing from order, found %q after %q; sort the rows and merge duplicates", c.Hosts[i].From, c.Hosts[i-1].From)
		}
	}
}

// checkHostCap checks one row; it reports whether its from parsed.
func checkHostCap(h *HostCap, path string, probs *problem.List) bool {
	v, err := version.Parse(h.From)
	if err != nil {
		probs.Errorf("host.caps.from", path+".from", "expected a host version such as \"0.80.0\", found %q: %v", truncateQuote(h.From), err)
	}
	h.from = v
	if h.APIVersions == nil {
		h.APIVersions = []int{}
	}
	seen := map[int]bool{}
	for j, a := range h.APIVersions {
		if a < manifest.LegacyAPIVersion || a > manifest.CurrentAPIVersion {
			probs.Errorf("host.caps.api_version", fmt.Sprintf("%s.api_versions[%d]", path, j), "expected an api_version the registry knows (%d to %d), found %d", manifest.LegacyAPIVersion, manifest.CurrentAPIVersion, a)
		}
		if seen[a] {
			probs.Errorf("host.caps.api_version", fmt.Sprintf("%s.api_versions[%d]", path, j), "api_version %d appears twice; list it once", a)
		}
		seen[a] = true
	}
	if len(h.Note) > 300 || strings.ContainsAny(h.Note, "\r\n") {
		probs.Errorf("host.caps.parse", path+".note", "expected a one-line note of at most 300 bytes, found %d bytes", len(h.Note))
	}
	return err == nil
}

// truncateQuote shortens s for an error message.
func truncateQuote(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// Row returns the index of the row host falls in.
func (c *HostCaps) Row(host version.V) int {
	i, _ := slices.BinarySearchFunc(c.Hosts, host, func(h HostCap, v version.V) int { return h.from.Compare(v) })
	if i < len(c.Hosts) && c.Hosts[i].from.Compare(host) == 0 {
		return i
	}
	if i == 0 { // a prerelease of 0.0.0 precedes the first row
		return 0
	}
	return i - 1
}

// Accepts reports whether the row's hosts accept api_version a.
func (h *HostCap) Accepts(a int) bool { return slices.Contains(h.APIVersions, a) }

// lowestInstalling is the first row whose hosts install a release of api_version api (a
// canvas when canvas); false when no row does.
func (c *HostCaps) lowestInstalling(api int, canvas bool) (int, bool) {
	for i := range c.Hosts {
		if c.Hosts[i].Accepts(api) && (!canvas || c.Hosts[i].Canvases) {
			return i, true
		}
	}
	return 0, false
}

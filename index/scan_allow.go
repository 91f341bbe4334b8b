package index

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/pluginyard/registry/verify"
)

// ScanAllow allows one content-scan finding: rule (a scan.* id, verify.ScanRules) in the
// file at Path inside the package. Publish then lists the finding as a warning instead of
// refusing the package (docs/scanning.md).
type ScanAllow struct {
	Path string `json:"path"`
	Rule string `json:"rule"`
}

// Allows reports whether one of allows names rule in the file at file.
func Allows(allows []ScanAllow, file, rule string) bool {
	return slices.Contains(allows, ScanAllow{Path: file, Rule: rule})
}

var scanAllowFields = []string{"path", "rule"}

// maxScanAllow bounds an entry's allowances: each is a named false positive, reviewed by a
// curator; a package with more needs its fixtures out of the package.
const maxScanAllow = 50

// maxScanAllowPath is verify's path limit for plugins (PluginLimits().MaxPathLen).
const maxScanAllowPath = 1024

// scanAllow decodes an entry's scan_allow list: [{path: testdata/fake.pem, rule:
// scan.private_key}, ...].
func (d *decoder) scanAllow(n *yaml.Node, at string) []ScanAllow {
	items := d.seq(n, at)
	if len(items) > maxScanAllow {
		d.errorf(n, "registry.scan_allow", at, "expected at most %d allowances, found %d; move test fixtures that look like secrets out of the package", maxScanAllow, len(items))
		items = items[:maxScanAllow]
	}
	var out []ScanAllow
	for i, item := range items {
		ip := fmt.Sprintf("%s[%d]", at, i)
		vals, ok := d.fields(item, ip, scanAllowFields)
		if !ok {
			continue
		}
		p, pok := d.requiredString(item, &vals, ip, "path", "registry.scan_allow.path", checkScanPath)
		r, rok := d.requiredString(item, &vals, ip, "rule", "registry.scan_allow.rule", checkScanRule)
		if !pok || !rok {
			continue
		}
		a := ScanAllow{Path: p, Rule: r}
		if slices.Contains(out, a) {
			d.warnf(item, "registry.scan_allow", ip, "{path: %s, rule: %s} is listed twice; remove the repetition", p, r)
			continue
		}
		out = append(out, a)
	}
	return out
}

// checkScanPath: a path as the package names it, slash-separated and relative.
func checkScanPath(p string) string {
	switch {
	case p == "":
		return "the path is empty; name the file as the refusal names it, e.g. testdata/fake.pem"
	case len(p) > maxScanAllowPath:
		return fmt.Sprintf("the path is %d bytes long; at most %d are allowed", len(p), maxScanAllowPath)
	case strings.HasPrefix(p, "/") || strings.Contains(p, `\`) || path.Clean(p) != p || p == "." || strings.HasPrefix(p, "../"):
		return fmt.Sprintf("%q is not a clean relative path inside the package; write it as the refusal names it, e.g. testdata/fake.pem (no leading ./ or /, no .. or \\)", p)
	case strings.ContainsAny(p, "*?["):
		return fmt.Sprintf("%q is a pattern; scan_allow names one file each, so that every allowed false positive is reviewed", p)
	}
	return ""
}

func checkScanRule(r string) string {
	rules := verify.ScanRules()
	if slices.Contains(rules, r) {
		return ""
	}
	if strings.HasPrefix(r, "scan.blocklist.") {
		return fmt.Sprintf("%s cannot be allowed in plugins.yaml: the blocklist is the admins' (registry blocklist remove)", r)
	}
	return fmt.Sprintf("unknown scan rule %q; expected one of %s", r, strings.Join(rules, ", "))
}

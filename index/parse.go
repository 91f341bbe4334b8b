package index

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/problem"
)

// maxCategoryLen bounds a curation tag; tags are short words such as "analytics".
const maxCategoryLen = 64

// The fields each mapping of plugins.yaml knows, in the order "unknown field" names them.
var (
	rootFields      = []string{"plugins", "extensions"}
	pluginFields    = []string{"id", "repo", "kind", "categories", "featured", "official", "previews", "signing", "owners", "similar_to_allowed", "scan_allow"}
	extensionFields = []string{"name", "repo", "categories", "featured", "signing", "owners", "similar_to_allowed", "scan_allow"}
	previewFields   = []string{"url", "alt"}
	signingFields   = []string{"required", "sigstore", "ed25519_keys"}
	sigstoreFields  = []string{"repository", "workflow", "ref", "issuer"}
)

// ParseList decodes and checks a registry list strictly: unknown fields, wrong types,
// duplicate ids or names, bad ids, repositories, kinds, previews, signing blocks and owners
// are all reported, each with its field path and position (see the package doc). The list
// is returned whenever the file is a YAML mapping, with the entries that decoded, so that a
// caller can show what it would list; trust it only when the problems hold no error.
func ParseList(data []byte) (*List, problem.List) {
	l, probs, _ := parseList(data)
	return l, probs
}

// parseList is ParseList that also returns the document's root mapping (nil when the list
// is), so that LoadList finds the entries' positions without decoding the file again.
func parseList(data []byte) (*List, problem.List, *yaml.Node) {
	d := &decoder{}
	root := d.document(data)
	if root == nil {
		return nil, d.problems(), nil
	}
	vals, ok := d.fields(root, "", rootFields)
	if !ok {
		return nil, d.problems(), nil
	}
	if vals.get("plugins") == nil && vals.get("extensions") == nil {
		d.errorf(root, "registry.field.required", "plugins", "expected a top-level plugins: list (and optionally extensions:), found neither")
	}
	l := &List{}
	if n := vals.get("plugins"); n != nil {
		l.Plugins = d.plugins(n)
	}
	if n := vals.get("extensions"); n != nil {
		l.Extensions = d.extensions(n)
	}
	d.lookalikes(root, l) // needs every entry: an id may only resemble, or allow, one listed
	return l, d.problems(), root
}

func (d *decoder) plugins(n *yaml.Node) []Entry {
	items := d.seq(n, "plugins")
	if len(items) == 0 {
		return nil // an empty section decodes to no slice, as it always has
	}
	out := make([]Entry, 0, len(items))
	first := make(map[string]firstAt, len(items))
	for i, item := range items {
		path := fmt.Sprintf("plugins[%d]", i)
		e, idNode, ok := d.plugin(item, path)
		if !ok {
			continue
		}
		if prev, dup := first[e.ID]; dup {
			d.errorf(idNode, "registry.id.duplicate", path+".id", "id %q is already listed at %s; each id may appear once", e.ID, prev)
			continue
		}
		first[e.ID] = firstAt{path: path, line: idNode.Line}
		out = append(out, e)
	}
	return out
}

// firstAt is where an id or name was first listed; a duplicate's message names it.
type firstAt struct {
	path string // plugins[2]
	line int
}

func (f firstAt) String() string { return fmt.Sprintf("%s (line %d)", f.path, f.line) }

// plugin decodes one plugins entry. ok is false when the entry has no usable id.
func (d *decoder) plugin(n *yaml.Node, path string) (e Entry, idNode *yaml.Node, ok bool) {
	vals, isMap := d.fields(n, path, pluginFields)
	if !isMap {
		return e, nil, false
	}
	e.ID, ok = d.requiredString(n, &vals, path, "id", "registry.id", checkID)
	e.Repo, _ = d.requiredString(n, &vals, path, "repo", "registry.repo", checkRepo)
	e.Kind = d.kind(vals.get("kind"), path+".kind")
	e.Categories = d.categories(vals.get("categories"), path+".categories")
	if v := vals.get("featured"); v != nil {
		e.Featured = d.boolean(v, path+".featured")
	}
	if v := vals.get("official"); v != nil {
		e.Official = d.boolean(v, path+".official")
	}
	e.Previews = d.previews(vals.get("previews"), n, path+".previews", e.Kind == KindCanvas)
	if v := vals.get("signing"); v != nil {
		e.Signing = d.signing(v, path+".signing", e.Repo)
	}
	e.Owners = d.owners(vals.get("owners"), path+".owners", e.ID)
	e.SimilarToAllowed = d.similarToAllowed(vals.get("similar_to_allowed"), path+".similar_to_allowed", checkID)
	e.ScanAllow = d.scanAllow(vals.get("scan_allow"), path+".scan_allow")
	return e, vals.get("id"), ok
}

// requiredString decodes a required string field and checks it. ok is true when the field
// holds a valid value.
func (d *decoder) requiredString(parent *yaml.Node, vals *fieldVals, path, field, rule string, check func(string) string) (string, bool) {
	v := vals.get(field)
	if v == nil {
		d.errorf(parent, "registry.field.required", path+"."+field, "the required field %s is missing", field)
		return "", false
	}
	s, ok := strValue(v)
	if !ok {
		d.str(v, path+"."+field) // reports it
		return "", false
	}
	if msg := check(s); msg != "" {
		d.errorf(v, rule, path+"."+field, "%s", msg)
		return s, false
	}
	return s, true
}

func (d *decoder) kind(n *yaml.Node, path string) string {
	if n == nil {
		return KindPlugin
	}
	s, ok := d.str(n, path)
	if !ok {
		return KindPlugin
	}
	if s != KindPlugin && s != KindCanvas {
		d.errorf(n, "registry.kind", path, "expected plugin or canvas, found %q", s)
		return KindPlugin
	}
	return s
}

func (d *decoder) categories(n *yaml.Node, path string) []string {
	out := d.strs(n, path, "registry.categories", checkCategory)
	d.unknownCategories(n, path)
	return out
}

func checkCategory(c string) string {
	if t := strings.TrimSpace(c); t == "" || t != c || utf8.RuneCountInString(c) > maxCategoryLen {
		return fmt.Sprintf("expected a category tag of 1 to %d characters without surrounding spaces, found %q", maxCategoryLen, c)
	}
	return ""
}

// unknownCategories warns about every well-formed tag that is not a manifest category:
// hosts filter by the manifest's categories only, so such a tag never shows there.
func (d *decoder) unknownCategories(n *yaml.Node, path string) {
	if n == nil || n.Kind != yaml.SequenceNode {
		return // d.strs reported it
	}
	known := d.knownCategories()
	for i, item := range n.Content {
		c := item.Value
		if item.Kind != yaml.ScalarNode || checkCategory(c) != "" || slices.Contains(known, c) {
			continue
		}
		hint := ""
		if s := problem.DidYouMean(c, known, nil); s != "" {
			hint = "; " + s
		}
		d.warnf(item, "registry.categories.unknown", fmt.Sprintf("%s[%d]", path, i),
			"expected one of the categories Kandev hosts know (%s), found %q, which their filters never show%s", strings.Join(known, ", "), c, hint)
	}
}

// knownCategories is manifest.Categories(), asked once per list rather than once per entry.
func (d *decoder) knownCategories() []string {
	if d.known == nil {
		d.known = manifest.Categories()
	}
	return d.known
}

// owners decodes an owners list; one written but empty (owners: []) is most likely a
// template left unfilled, so it is warned about: it names no publisher at all.
func (d *decoder) owners(n *yaml.Node, path, who string) []string {
	out := d.strs(n, path, "registry.owners", checkPublisher)
	if n != nil && (isNull(n) || (n.Kind == yaml.SequenceNode && len(n.Content) == 0)) {
		d.warnf(n, "registry.owners.empty", path, "expected at least one publisher name, found none: no publisher token may publish, yank or deprecate %s "+
			"(trusted publishing from its repo still can); list the publisher names (as given to `registry token create --publisher`), or remove the field", who)
	}
	return out
}

func (d *decoder) previews(n, parent *yaml.Node, path string, canvas bool) []Preview {
	items := d.seq(n, path)
	if canvas && len(items) == 0 {
		at := n
		if at == nil {
			at = parent
		}
		d.errorf(at, "registry.previews.required", path, "a canvas needs at least one preview (the first is its cover); add previews: [{url, alt}]")
	}
	if len(items) > MaxPreviews {
		d.errorf(items[MaxPreviews], "registry.previews.count", path, "expected at most %d previews, found %d; keep the %d best", MaxPreviews, len(items), MaxPreviews)
	}
	var out []Preview
	for i, item := range items {
		if p, ok := d.preview(item, fmt.Sprintf("%s[%d]", path, i)); ok {
			out = append(out, p)
		}
	}
	return out
}

func (d *decoder) preview(n *yaml.Node, path string) (Preview, bool) {
	var p Preview
	vals, ok := d.fields(n, path, previewFields)
	if !ok {
		return p, false
	}
	u, uok := d.requiredString(n, &vals, path, "url", "registry.previews.url", checkPreviewURL)
	a, aok := d.requiredString(n, &vals, path, "alt", "registry.previews.alt", checkPreviewAlt)
	p = Preview{URL: u, Alt: a}
	return p, uok && aok
}

func (d *decoder) signing(n *yaml.Node, path, repo string) *Signing {
	vals, ok := d.fields(n, path, signingFields)
	if !ok {
		return nil
	}
	s := &Signing{}
	if v := vals.get("required"); v != nil {
		s.Required = d.boolean(v, path+".required")
	}
	s.Ed25519Keys = d.strs(vals.get("ed25519_keys"), path+".ed25519_keys", "registry.signing.ed25519_keys", checkEd25519Key)
	switch v := vals.get("sigstore"); {
	case v != nil && !isNull(v):
		s.Sigstore = d.sigstore(v, path+".sigstore", repo)
	case vals.get("ed25519_keys") == nil:
		s.Sigstore = &SigstoreIdentity{Repository: repo, Issuer: DefaultIssuer}
	}
	return s
}

func (d *decoder) sigstore(n *yaml.Node, path, repo string) *SigstoreIdentity {
	vals, ok := d.fields(n, path, sigstoreFields)
	if !ok {
		return nil
	}
	id := &SigstoreIdentity{Repository: repo, Issuer: DefaultIssuer}
	d.optString(vals.get("repository"), path+".repository", "registry.signing.sigstore.repository", checkRepo, &id.Repository)
	d.optString(vals.get("workflow"), path+".workflow", "registry.signing.sigstore.workflow", checkWorkflow, &id.Workflow)
	d.optString(vals.get("ref"), path+".ref", "registry.signing.sigstore.ref", checkRef, &id.Ref)
	d.optString(vals.get("issuer"), path+".issuer", "registry.signing.sigstore.issuer", checkIssuer, &id.Issuer)
	return id
}

// optString decodes an optional string into *dst when present and valid.
func (d *decoder) optString(n *yaml.Node, path, rule string, check func(string) string, dst *string) {
	if isNull(n) {
		return
	}
	s, ok := d.str(n, path)
	if !ok {
		return
	}
	if msg := check(s); msg != "" {
		d.errorf(n, rule, path, "%s", msg)
		return
	}
	*dst = s
}

func (d *decoder) extensions(n *yaml.Node) []ExtensionEntry {
	items := d.seq(n, "extensions")
	if len(items) == 0 {
		return nil // an empty section decodes to no slice, as it always has
	}
	out := make([]ExtensionEntry, 0, len(items))
	first := make(map[string]firstAt, len(items))
	for i, item := range items {
		path := fmt.Sprintf("extensions[%d]", i)
		e, nameNode, ok := d.extension(item, path)
		if !ok {
			continue
		}
		if prev, dup := first[e.Name]; dup {
			d.errorf(nameNode, "registry.extension.name.duplicate", path+".name", "extension %q is already listed at %s; each name may appear once", e.Name, prev)
			continue
		}
		first[e.Name] = firstAt{path: path, line: nameNode.Line}
		out = append(out, e)
	}
	return out
}

func (d *decoder) extension(n *yaml.Node, path string) (e ExtensionEntry, nameNode *yaml.Node, ok bool) {
	vals, isMap := d.fields(n, path, extensionFields)
	if !isMap {
		return e, nil, false
	}
	e.Name, ok = d.requiredString(n, &vals, path, "name", "registry.extension.name", checkExtensionName)
	e.Repo, _ = d.requiredString(n, &vals, path, "repo", "registry.repo", checkRepo)
	e.Categories = d.categories(vals.get("categories"), path+".categories")
	if v := vals.get("featured"); v != nil {
		e.Featured = d.boolean(v, path+".featured")
	}
	if v := vals.get("signing"); v != nil {
		e.Signing = d.signing(v, path+".signing", e.Repo)
	}
	e.Owners = d.owners(vals.get("owners"), path+".owners", e.Name)
	e.SimilarToAllowed = d.similarToAllowed(vals.get("similar_to_allowed"), path+".similar_to_allowed", checkExtensionName)
	e.ScanAllow = d.scanAllow(vals.get("scan_allow"), path+".scan_allow")
	return e, vals.get("name"), ok
}

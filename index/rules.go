package index

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on previews, shared with Kandev hosts (contract §1).
const (
	MaxPreviews      = 8
	MaxPreviewURLLen = 2048
	MaxPreviewAltLen = 300
)

// PublisherPattern is what a publisher name matches: every owner in plugins.yaml, and so
// the publisher of every publisher token (owners are compared exactly, case included).
const PublisherPattern = `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`

// IDPattern is what a plugin id matches (rule registry.id).
const IDPattern = `^[a-z0-9][a-z0-9._-]*$`

var (
	// idRE is the manifest id pattern: an entry id must equal a manifest id.
	idRE = regexp.MustCompile(IDPattern)
	// GitHub logins: alphanumerics and hyphens, not starting with a hyphen, at most 39.
	ownerRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}$`)
	// GitHub repository names: at most 100 of alphanumerics, '.', '_' and '-'.
	repoNameRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
	// npm package names, optionally scoped, lowercase.
	npmNameRE = regexp.MustCompile(`^(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$`)
	// Publisher names as given to `registry token create --publisher`.
	publisherRE = regexp.MustCompile(PublisherPattern)
	// Workflow files as they appear in a GitHub Actions certificate SAN.
	workflowRE = regexp.MustCompile(`^\.github/workflows/[A-Za-z0-9._-]+\.ya?ml$`)
)

// checkID returns why id is not a valid plugin id, or "".
func checkID(id string) string {
	switch {
	case !idRE.MatchString(id):
		return fmt.Sprintf("expected a manifest id matching ^[a-z0-9][a-z0-9._-]*$ (lowercase letters, digits, '.', '_', '-'), found %q", id)
	case strings.HasSuffix(id, ".config"):
		return fmt.Sprintf("expected an id without the .config suffix (Kandev reserves it for configuration files), found %q", id)
	}
	return ""
}

// ValidID reports whether id may be a plugin id in plugins.yaml (rule registry.id).
func ValidID(id string) bool { return checkID(id) == "" }

// checkRepo returns why repo is not a GitHub "owner/name", or "".
func checkRepo(repo string) string {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || !ownerRE.MatchString(owner) || !repoNameRE.MatchString(name) ||
		name == "." || name == ".." || strings.HasSuffix(name, ".git") {
		return fmt.Sprintf("expected a GitHub repository as owner/name (e.g. acme/kandev-plugin-board, no URL, no .git), found %q", repo)
	}
	return ""
}

// checkExtensionName returns why name is not an npm-style package name, or "".
func checkExtensionName(name string) string {
	if len(name) > 214 || !npmNameRE.MatchString(name) {
		return fmt.Sprintf("expected an npm-style package name (lowercase, optionally @scope/, at most 214 characters), found %q", name)
	}
	return ""
}

// checkPreviewURL returns why u is not an acceptable preview URL, or "". The rules are the
// Kandev host's: absolute https with a host, no credentials, no fragment, at most 2048 chars.
func checkPreviewURL(u string) string {
	if len(u) > MaxPreviewURLLen {
		return fmt.Sprintf("expected a URL of at most %d characters, found %d; host the image at a shorter URL", MaxPreviewURLLen, len(u))
	}
	if strings.ContainsFunc(u, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return fmt.Sprintf("expected a URL without spaces or control characters, found %q; percent-encode them", u)
	}
	p, err := url.Parse(u)
	switch {
	case err != nil || p.Scheme != "https" || p.Host == "" || p.Hostname() == "" || p.Opaque != "":
		return fmt.Sprintf("expected an absolute https URL (https://host/path), found %q", u)
	case p.User != nil:
		return fmt.Sprintf("expected a URL without credentials, found user information in %q; hosts refuse it", u)
	case strings.Contains(u, "#"):
		return fmt.Sprintf("expected a URL without a fragment, found %q; remove the #…", u)
	}
	return ""
}

// checkPreviewAlt returns why alt is not acceptable alternative text, or "".
func checkPreviewAlt(alt string) string {
	n := utf8.RuneCountInString(strings.TrimSpace(alt))
	if n < 1 || n > MaxPreviewAltLen {
		return fmt.Sprintf("expected alternative text of 1 to %d characters after trimming, found %d; describe what the image shows", MaxPreviewAltLen, n)
	}
	return ""
}

// checkEd25519Key returns why key is not the base64 of a 32-byte ed25519 public key, or "".
func checkEd25519Key(key string) string {
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return fmt.Sprintf("expected the standard base64 of a 32-byte ed25519 public key, found %q, which is not base64", key)
	}
	if len(raw) != 32 {
		return fmt.Sprintf("expected the base64 of a 32-byte ed25519 public key, found %d bytes", len(raw))
	}
	return ""
}

// checkWorkflow returns why w is not a workflow path as certificates name it, or "".
func checkWorkflow(w string) string {
	if !workflowRE.MatchString(w) {
		return fmt.Sprintf("expected a workflow file path such as .github/workflows/release.yml, found %q", w)
	}
	return ""
}

// checkRef returns why ref is not a full git ref or a valid glob of one, or "".
func checkRef(ref string) string {
	if !strings.HasPrefix(ref, "refs/") || strings.ContainsFunc(ref, unicode.IsSpace) {
		return fmt.Sprintf("expected a full git ref or a glob of one (refs/tags/v*, refs/heads/main), found %q", ref)
	}
	if _, err := path.Match(ref, ""); err != nil {
		return fmt.Sprintf("expected a valid glob, found %q: %v", ref, err)
	}
	return ""
}

// checkIssuer returns why iss is not an absolute https issuer URL, or "".
func checkIssuer(iss string) string {
	p, err := url.Parse(iss)
	if err != nil || p.Scheme != "https" || p.Host == "" || p.User != nil || p.Fragment != "" {
		return fmt.Sprintf("expected an absolute https issuer URL such as %s, found %q", DefaultIssuer, iss)
	}
	return ""
}

// ValidPublisher reports whether name is a publisher name (PublisherPattern), one that
// plugins.yaml may list among an entry's owners.
func ValidPublisher(name string) bool { return publisherRE.MatchString(name) }

// checkPublisher returns why name is not a publisher name, or "".
func checkPublisher(name string) string {
	if !publisherRE.MatchString(name) {
		return fmt.Sprintf("expected a publisher name (letters, digits, '.', '_', '-', at most 64, starting with a letter or digit), found %q", name)
	}
	return ""
}

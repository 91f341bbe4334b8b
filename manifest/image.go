package manifest

import (
	"bytes"
	"path"
	"strings"
)

// MaxIconSize is the largest icon the registry serves; larger icons are reported.
const MaxIconSize = 1 << 20

// ImageType identifies an image by its first bytes: png, jpeg, webp, gif or svg. It returns
// the content type and the canonical extension, or empty strings when head is not one of them.
func ImageType(head []byte) (contentType, ext string) {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png", ".png"
	case bytes.HasPrefix(head, []byte{0xff, 0xd8, 0xff}):
		return "image/jpeg", ".jpg"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif", ".gif"
	case len(head) >= 12 && bytes.Equal(head[:4], []byte("RIFF")) && bytes.Equal(head[8:12], []byte("WEBP")):
		return "image/webp", ".webp"
	case isSVG(head):
		return "image/svg+xml", ".svg"
	}
	return "", ""
}

// isSVG accepts text that opens (after a BOM, whitespace, an XML declaration, comments or a
// doctype) with an <svg element.
func isSVG(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	s := strings.TrimPrefix(string(head), "\ufeff")
	for {
		s = strings.TrimLeft(s, " \t\r\n")
		var end string
		switch {
		case strings.HasPrefix(s, "<?"):
			end = "?>"
		case strings.HasPrefix(s, "<!--"):
			end = "-->"
		case strings.HasPrefix(s, "<!"):
			end = ">"
		default:
			return strings.HasPrefix(s, "<svg") && len(s) > 4 && strings.ContainsAny(s[4:5], " \t\r\n>/")
		}
		i := strings.Index(s, end)
		if i < 0 {
			return false
		}
		s = s[i+len(end):]
	}
}

// icon checks the declared icon. Hosts accept any value and fall back to a letter tile, so
// every finding is a warning.
func (c *checker) icon() {
	icon := c.m.Icon
	if icon == "" {
		return
	}
	if msg := packagePathProblem(icon); msg != "" {
		c.probs.Warnf("manifest.icon.path", "icon", "expected a clean package-relative path such as assets/icon.svg, found %q (%s); the card falls back to a letter tile, so point icon at a file in the package", icon, msg)
		return
	}
	if c.files == nil {
		return
	}
	f, ok := c.files[icon]
	if !ok {
		c.probs.Warnf("manifest.icon.missing", "icon", "expected the package to contain %q, found no such file; the card falls back to a letter tile, so ship the icon or remove the field", icon)
		return
	}
	if ct, _ := ImageType(f.Head); ct == "" {
		c.probs.Warnf("manifest.icon.format", "icon", "expected a PNG, JPEG, WebP, GIF or SVG image, found %q whose content is none of these; the card falls back to a letter tile, so ship a real image", icon)
	}
	if f.Size > MaxIconSize {
		c.probs.Warnf("manifest.icon.size", "icon", "expected an icon of at most %d bytes, found %d bytes in %q; shrink the image", MaxIconSize, f.Size, icon)
	}
}

// packagePathProblem says what is wrong with a package-relative path, or "" when it is fine.
func packagePathProblem(p string) string {
	switch {
	case p == "":
		return "empty"
	case strings.Contains(p, "://"):
		return "a URL"
	case strings.Contains(p, `\`):
		return "backslash"
	case path.IsAbs(p):
		return "absolute"
	case path.Clean(p) != p:
		return "not clean"
	case p == ".." || strings.HasPrefix(p, "../"):
		return "outside the package"
	}
	return ""
}

package verify

import (
	"bytes"
	"net/http"
	"path"
	"strings"
)

// MaxIconSize is the largest icon a package may ship, in bytes (1 MiB): the registry keeps
// the icon in memory while verifying, stores it at publish and serves it from /icons/, so
// it is bounded like every other field that reaches a shared page. A larger icon is refused
// at publish (manifest.icon.size); so is one whose bytes are not PNG, JPEG, WebP or SVG
// (manifest.icon.type), whatever its file name says.
const MaxIconSize = maxImageSize

// imageExts are the extensions of the image formats worth keeping while reading, in case
// the manifest names one as its icon (GIF included, so that a GIF icon is kept and then
// refused by type with a clear message rather than dropped).
var imageExts = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".webp": "image/webp", ".svg": "image/svg+xml",
}

// looksLikeImage decides, from the name and the first bytes, whether a file is worth
// keeping whole in case the manifest names it as the icon.
func looksLikeImage(name string, head []byte) bool {
	if _, ok := imageExts[strings.ToLower(path.Ext(name))]; ok {
		return true
	}
	ct, _ := SniffImage(head)
	return ct != ""
}

// iconType returns the content type and extension of an icon by its content: PNG, JPEG,
// WebP or SVG, the types the registry serves from /icons/; "" for anything else (GIF
// included: it is not on the allow list the pages and hosts agree on).
func iconType(data []byte) (contentType, ext string) {
	ct, ext := SniffImage(data)
	if ct == "image/gif" {
		return "", ""
	}
	return ct, ext
}

// describeType names what data is, for a refusal message.
func describeType(head []byte) string {
	if ct, _ := SniffImage(head); ct != "" {
		return "a " + ct + " image"
	}
	return "of type " + http.DetectContentType(head)
}

// SniffImage returns the content type and extension of an image by its content
// (png, jpeg, gif, webp or svg), or "" when data is none of those.
func SniffImage(data []byte) (contentType, ext string) {
	switch ct := http.DetectContentType(data); ct {
	case "image/png":
		return ct, ".png"
	case "image/jpeg":
		return ct, ".jpg"
	case "image/gif":
		return ct, ".gif"
	case "image/webp":
		return ct, ".webp"
	}
	if isSVG(data) {
		return "image/svg+xml", ".svg"
	}
	return "", ""
}

// isSVG reports an XML document whose first element is <svg>, allowing an XML
// declaration, comments and a doctype before it.
func isSVG(data []byte) bool {
	rest := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n")
	for len(rest) > 0 {
		switch {
		case bytes.HasPrefix(rest, []byte("<?")):
			rest = after(rest, "?>")
		case bytes.HasPrefix(rest, []byte("<!--")):
			rest = after(rest, "-->")
		case bytes.HasPrefix(rest, []byte("<!")):
			rest = after(rest, ">")
		default:
			return hasTagPrefix(rest, "<svg")
		}
		rest = bytes.TrimLeft(rest, " \t\r\n")
	}
	return false
}

func after(b []byte, sep string) []byte {
	_, rest, ok := bytes.Cut(b, []byte(sep))
	if !ok {
		return nil
	}
	return rest
}

func hasTagPrefix(b []byte, tag string) bool {
	if !bytes.HasPrefix(b, []byte(tag)) || len(b) == len(tag) {
		return false
	}
	switch b[len(tag)] {
	case ' ', '>', '\t', '\r', '\n', '/':
		return true
	}
	return false
}

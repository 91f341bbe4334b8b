package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"path"
	"strings"
	"sync"
)

//go:embed static
var staticFS embed.FS

// asset is one embedded static file and its content-hashed name.
type asset struct {
	hashed      string // e.g. app.3f2a9c1b0d4e.css
	data        []byte
	contentType string
}

// staticContentTypes maps the extensions the static folder uses.
var staticContentTypes = map[string]string{
	".css": "text/css; charset=utf-8",
	".js":  "text/javascript; charset=utf-8",
	".svg": "image/svg+xml",
}

// assets hashes the embedded files once; the result never changes while the
// process runs, because the files are compiled in.
var assets = sync.OnceValue(func() map[string]asset {
	entries, err := staticFS.ReadDir("static")
	if err != nil {
		panic("web: embedded static folder unreadable: " + err.Error())
	}
	out := make(map[string]asset, len(entries))
	for _, e := range entries {
		data, err := staticFS.ReadFile("static/" + e.Name())
		if err != nil {
			panic("web: embedded static file unreadable: " + err.Error())
		}
		out[e.Name()] = newAsset(e.Name(), data)
	}
	return out
})

func newAsset(name string, data []byte) asset {
	sum := sha256.Sum256(data)
	ext := path.Ext(name)
	return asset{
		hashed:      strings.TrimSuffix(name, ext) + "." + hex.EncodeToString(sum[:6]) + ext,
		data:        data,
		contentType: staticContentTypes[ext],
	}
}

// assetPath returns the URL path of an embedded file by its plain name.
func assetPath(name string) string {
	return "/static/" + assets()[name].hashed
}

// CSSPath returns the content-hashed URL path of the stylesheet, e.g.
// /static/app.3f2a9c1b0d4e.css. Serve it with immutable caching.
func CSSPath() string { return assetPath("app.css") }

// JSPath returns the content-hashed URL path of the copy-button script.
func JSPath() string { return assetPath("copy.js") }

// FaviconPath returns the content-hashed URL path of the site icon.
func FaviconPath() string { return assetPath("favicon.svg") }

// Static returns an embedded file by its content-hashed name (the part of
// the URL after /static/). Only current hashed names are found, so a
// response can carry `Cache-Control: public, max-age=31536000, immutable`.
func Static(name string) (data []byte, contentType string, ok bool) {
	for _, a := range assets() {
		if a.hashed == name {
			return a.data, a.contentType, true
		}
	}
	return nil, "", false
}

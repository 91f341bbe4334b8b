package web

// HTML is markup that is safe to write into a page as it is: a README rendered by
// readme.Render at publish and kept with the release. Pages never render Markdown; only
// StoredREADME makes a non-empty HTML, so an ordinary string cannot reach a page raw.
type HTML struct {
	s string
}

// StoredREADME wraps a release's stored README HTML (store.Release.READMEHTML), which
// readme.Render sanitized when the release was published.
func StoredREADME(html []byte) HTML { return HTML{s: string(html)} }

// String returns the markup.
func (h HTML) String() string { return h.s }

// IsZero reports whether there is no markup.
func (h HTML) IsZero() bool { return h.s == "" }

package manifest

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
)

var (
	pageSurfaces     = []string{"settings", "task-panel", "main-nav"}
	placements       = []string{"task-canvas", "workspace-canvas"}
	webAppKeyPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
)

func (c *checker) ui() {
	u := c.m.UI
	if u == nil {
		return
	}
	c.uiBundle(u)
	for i, p := range u.Pages {
		c.page(fmt.Sprintf("ui.pages[%d]", i), p)
	}
	keys := map[string]bool{}
	for i, w := range u.WebApps {
		c.webApp(fmt.Sprintf("ui.web_apps[%d]", i), w, keys)
	}
	c.keybindings(u)
}

func (c *checker) uiBundle(u *UI) {
	if u.Bundle != "" {
		c.rootRelative("manifest.ui.bundle.path", "manifest.ui.bundle.missing", "ui.bundle", u.Bundle)
	}
	for i, s := range u.Styles {
		c.rootRelative("manifest.ui.styles.path", "manifest.ui.styles.missing", fmt.Sprintf("ui.styles[%d]", i), s)
	}
}

// rootRelative checks a "/"-prefixed path (error: the host refuses others) and, given the
// package files, that it is shipped (warning: the host installs it, the UI fails to load).
func (c *checker) rootRelative(pathRule, missingRule, p, value string) {
	if !strings.HasPrefix(value, "/") {
		c.probs.Errorf(pathRule, p, "expected a root-relative path starting with \"/\" (e.g. /ui/bundle.js), found %q; prefix it with /", value)
		return
	}
	if c.files == nil {
		return
	}
	rel := strings.TrimPrefix(value, "/")
	if _, ok := c.files[rel]; !ok || path.Clean(value) != value {
		c.probs.Warnf(missingRule, p, "expected the package to contain %q, found no such file; the UI cannot load it, so ship the file or fix the path", rel)
	}
}

func (c *checker) page(p string, pg Page) {
	if !contains(pageSurfaces, pg.Surface) {
		c.probs.Errorf("manifest.ui.pages.surface", p+".surface", "expected surface settings, task-panel or main-nav, found %q; hosts reject other values", pg.Surface)
	}
	for _, f := range []struct{ name, value string }{{"key", pg.Key}, {"title", pg.Title}, {"path", pg.Path}} {
		if strings.TrimSpace(f.value) == "" {
			c.probs.Warnf("manifest.ui.pages.required", p+"."+f.name, "expected a %s for the page, found none; add it (ui.pages is metadata only, so hosts still accept the manifest)", f.name)
		}
	}
}

func (c *checker) webApp(p string, w WebApp, keys map[string]bool) {
	switch {
	case !webAppKeyPattern.MatchString(w.Key):
		c.probs.Errorf("manifest.ui.web_apps.key", p+".key", "expected a key matching %s, found %q; rename the web app", webAppKeyPattern, w.Key)
	case keys[w.Key]:
		c.probs.Errorf("manifest.ui.web_apps.duplicate", p+".key", "expected unique web app keys, found %q again; rename or remove it", w.Key)
	}
	keys[w.Key] = true
	if strings.TrimSpace(w.Title) == "" || len(w.Title) > 200 {
		c.probs.Errorf("manifest.ui.web_apps.title", p+".title", "expected a title of 1 to 200 bytes, found %d bytes; set a short title", len(w.Title))
	}
	c.webAppEntry(p+".entry", w.Entry)
	c.placements(p+".placements", w.Placements)
	c.networkOrigins(p+".network_origins", w.NetworkOrigins)
}

func (c *checker) webAppEntry(p, entry string) {
	if msg := packagePathProblem(entry); msg != "" {
		c.probs.Errorf("manifest.ui.web_apps.entry", p, "expected a clean package-relative path to the entry HTML (e.g. ui/index.html), found %q (%s); fix the path", entry, msg)
		return
	}
	if c.files == nil {
		return
	}
	if _, ok := c.files[entry]; !ok {
		c.probs.Errorf("manifest.ui.web_apps.entry.missing", p, "expected the package to contain the entry document %q, found no such file; ship it or fix the path", entry)
	}
}

func (c *checker) placements(p string, list []string) {
	if len(list) == 0 {
		c.probs.Errorf("manifest.ui.web_apps.placements", p, "expected one or more of task-canvas, workspace-canvas, found none; add placements:")
		return
	}
	seen := map[string]bool{}
	for i, pl := range list {
		switch {
		case !contains(placements, pl):
			c.probs.Errorf("manifest.ui.web_apps.placements", fmt.Sprintf("%s[%d]", p, i), "expected task-canvas or workspace-canvas, found %q; hosts reject other placements", pl)
		case seen[pl]:
			c.probs.Errorf("manifest.ui.web_apps.placements", fmt.Sprintf("%s[%d]", p, i), "expected each placement once, found %q again; remove the duplicate", pl)
		}
		seen[pl] = true
	}
}

func (c *checker) networkOrigins(p string, origins []string) {
	seen := map[string]bool{}
	for i, raw := range origins {
		ip := fmt.Sprintf("%s[%d]", p, i)
		origin, ok := exactHTTPSOrigin(raw)
		switch {
		case !ok:
			c.probs.Errorf("manifest.ui.web_apps.network_origins", ip, "expected an exact HTTPS origin such as https://api.example.com (no path, credentials, wildcard, query or fragment), found %q; hosts reject it", raw)
		case seen[origin]:
			c.probs.Errorf("manifest.ui.web_apps.network_origins", ip, "expected each origin once, found %q again; remove the duplicate", origin)
		}
		seen[origin] = true
	}
}

// exactHTTPSOrigin returns the canonical origin, or false when raw is not an exact origin.
func exactHTTPSOrigin(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Hostname() == "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "" ||
		strings.ContainsAny(u.Host, "* \t\r\n") {
		return "", false
	}
	return "https://" + strings.ToLower(u.Host), true
}

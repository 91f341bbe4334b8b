package server_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/pack"
)

const svgIcon = `<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8"/></svg>`

// pngIcon encodes a side×side PNG of noise (incompressible: the file is about 4·side² bytes).
func pngIcon(t testing.TB, side int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, side, side))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = uint8(r.UintN(256))
	}
	img.Set(0, 0, color.NRGBA{A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// iconPkg builds a valid managed plugin package that ships icon at assets/<name>.
func iconPkg(t testing.TB, id, version, name string, icon []byte) []byte {
	t.Helper()
	manifest := "id: " + id + "\napi_version: 2\nversion: \"" + version + "\"\ndisplay_name: Hello\ndescription: Says hello" +
		"\nauthor: Acme\ncategories: [tools]\nicon: assets/" + name +
		"\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	fsys := fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: []byte("#!/bin/sh\necho hello\n"), Mode: 0o755},
		"README.md":                 {Data: []byte("# Hello\n")},
		"assets/" + name:            {Data: icon},
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// publishIcon publishes id@1.0.0 with the icon and returns the icon's path and the
// package's sha256, from index.json.
func (e *env) publishIcon(id, name string, icon []byte) (iconPath, pkgSHA string) {
	e.t.Helper()
	if r := e.publish(adminToken, id+"-1.0.0.tar.gz", iconPkg(e.t, id, "1.0.0", name, icon)); r.Status != http.StatusCreated {
		e.t.Fatalf("publish %s: %d %s", id, r.Status, r.Body)
	}
	for _, p := range e.index().Plugins {
		if p.ID == id && p.IconURL != nil {
			return strings.TrimPrefix(*p.IconURL, e.srv.URL), p.PackageSHA256
		}
	}
	e.t.Fatalf("%s has no icon_url in index.json", id)
	return "", ""
}

func TestIconsServeOnlyListedIconsAsTheirType(t *testing.T) {
	e := newEnv(t, "")
	pngData := pngIcon(t, 4)
	svgPath, pkgSHA := e.publishIcon("acme-hello", "icon.svg", []byte(svgIcon))
	pngPath, _ := e.publishIcon("acme-other", "logo.png", pngData)
	svgSHA := strings.TrimSuffix(strings.TrimPrefix(svgPath, "/icons/"), ".svg")
	pngSHA := strings.TrimSuffix(strings.TrimPrefix(pngPath, "/icons/"), ".png")

	tests := []struct {
		name, method, path string
		status             int
		ctype              string
		body               []byte
	}{
		{"svg icon", http.MethodGet, svgPath, http.StatusOK, "image/svg+xml", []byte(svgIcon)},
		{"png icon", http.MethodGet, pngPath, http.StatusOK, "image/png", pngData},
		{"HEAD", http.MethodHead, pngPath, http.StatusOK, "image/png", nil},
		{"svg under .png", http.MethodGet, "/icons/" + svgSHA + ".png", http.StatusNotFound, "", nil},
		{"png under .svg", http.MethodGet, "/icons/" + pngSHA + ".svg", http.StatusNotFound, "", nil},
		{"png under .gif", http.MethodGet, "/icons/" + pngSHA + ".gif", http.StatusNotFound, "", nil},
		{"no extension", http.MethodGet, "/icons/" + pngSHA, http.StatusNotFound, "", nil},
		{"a package's sha as svg", http.MethodGet, "/icons/" + pkgSHA + ".svg", http.StatusNotFound, "", nil},
		{"a package's sha as png", http.MethodGet, "/icons/" + pkgSHA + ".png", http.StatusNotFound, "", nil},
		{"HEAD of a package's sha", http.MethodHead, "/icons/" + pkgSHA + ".png", http.StatusNotFound, "", nil},
		{"unknown sha", http.MethodGet, "/icons/" + strings.Repeat("0", 64) + ".png", http.StatusNotFound, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, e.srv.URL+tt.path, nil)
			r := e.do(req)
			if r.Status != tt.status {
				t.Fatalf("%s %s: %d, want %d (%s)", tt.method, tt.path, r.Status, tt.status, r.Body)
			}
			if tt.status != http.StatusOK {
				return
			}
			sha := strings.TrimSuffix(strings.TrimPrefix(tt.path, "/icons/"), tt.path[strings.LastIndex(tt.path, "."):])
			if r.Header.Get("Content-Type") != tt.ctype || r.Header.Get("ETag") != `"`+sha+`"` ||
				r.Header.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(r.Header.Get("Content-Security-Policy"), "sandbox") {
				t.Errorf("headers: %v", r.Header)
			}
			if tt.method == http.MethodHead {
				if len(r.Body) != 0 || r.Header.Get("Content-Length") != strconv.Itoa(len(pngData)) {
					t.Errorf("HEAD: %d body bytes, Content-Length %q", len(r.Body), r.Header.Get("Content-Length"))
				}
				return
			}
			if !bytes.Equal(r.Body, tt.body) {
				t.Errorf("body: %d bytes, want %d", len(r.Body), len(tt.body))
			}
		})
	}
	if nm := e.get(pngPath, "If-None-Match", `"`+pngSHA+`"`); nm.Status != http.StatusNotModified {
		t.Errorf("If-None-Match with the icon's ETag: %d", nm.Status)
	}
}

func TestIconOfADelistedPackageIsGone(t *testing.T) {
	e := newEnv(t, "")
	path, _ := e.publishIcon("acme-other", "logo.png", pngIcon(t, 4))
	if r := e.get(path); r.Status != http.StatusOK {
		t.Fatalf("listed icon: %d", r.Status)
	}
	l, probs := index.ParseList([]byte("plugins:\n  - id: acme-hello\n    repo: acme/kandev-plugin-hello\n    owners: [acme]\n"))
	if l == nil || probs.HasErrors() {
		t.Fatalf("list: %v", probs)
	}
	if err := e.svc.SetList(context.Background(), l, "test"); err != nil {
		t.Fatal(err)
	}
	if r := e.get(path); r.Status != http.StatusNotFound {
		t.Errorf("icon of a delisted package: %d, want 404", r.Status)
	}
}

// TestIconIsStreamed serves a 600 KB icon in-process and measures what the handler
// allocates: reading the blob whole costs at least its size per request; streaming costs
// a copy buffer.
func TestIconIsStreamed(t *testing.T) {
	e := newEnv(t, "")
	icon := pngIcon(t, 390)
	path, _ := e.publishIcon("acme-hello", "icon.png", icon)
	h := e.srv.Config.Handler
	serve := func() {
		w := &discardWriter{h: http.Header{}}
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.status != http.StatusOK || w.n != len(icon) {
			t.Fatalf("icon: %d, %d bytes", w.status, w.n)
		}
	}
	serve()
	const runs = 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		serve()
	}
	runtime.ReadMemStats(&after)
	perRequest := (after.TotalAlloc - before.TotalAlloc) / runs
	if perRequest > uint64(len(icon))/4 {
		t.Errorf("serving a %d-byte icon allocates %d bytes per request; it is read whole instead of streamed", len(icon), perRequest)
	}
}

type discardWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *discardWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(b)
	return len(b), nil
}

// TestSupersededIconIsGone: only the icon of the release in force is served; the icon of
// an older release, no longer in index.json or the pages, is not.
func TestSupersededIconIsGone(t *testing.T) {
	e := newEnv(t, "")
	old, _ := e.publishIcon("acme-hello", "icon.svg", []byte(svgIcon))
	if r := e.publish(adminToken, "acme-hello-1.1.0.tar.gz", iconPkg(t, "acme-hello", "1.1.0", "icon.png", pngIcon(t, 4))); r.Status != http.StatusCreated {
		t.Fatalf("publish 1.1.0: %d %s", r.Status, r.Body)
	}
	current := strings.TrimPrefix(*e.index().Plugins[0].IconURL, e.srv.URL)
	if r := e.get(current); r.Status != http.StatusOK || r.Header.Get("Content-Type") != "image/png" {
		t.Errorf("current icon %s: %d %s", current, r.Status, r.Header.Get("Content-Type"))
	}
	if r := e.get(old); r.Status != http.StatusNotFound {
		t.Errorf("superseded icon %s: %d, want 404", old, r.Status)
	}
}

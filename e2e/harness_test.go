package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/pluginyard/registry/examples"
	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

// tabTimeout bounds one browser test; a page that never shows what a test waits for
// fails the test instead of hanging the package.
const tabTimeout = 20 * time.Second

// registry is one running registry with the bundled examples published.
type registry struct {
	URL  string
	List *index.List
	Svc  *ingest.Service
}

// chromiumMissing is the message of a skipped (or, under CI=true, failed) browser test.
const chromiumMissing = "chromium not found: apt-get install chromium, or set CHROMIUM_PATH"

// skipFataler is the part of testing.TB that requireChromium uses.
type skipFataler interface {
	Helper()
	Skip(args ...any)
	Fatal(args ...any)
}

// host is how requireChromium sees the machine.
type host struct {
	getenv   func(string) string
	lookPath func(string) (string, error)
	isFile   func(string) bool
}

// osHost is the real machine.
func osHost() host {
	return host{getenv: os.Getenv, lookPath: exec.LookPath, isFile: func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && !fi.IsDir()
	}}
}

// requireChromium finds the browser: $CHROMIUM_PATH, else chromium on $PATH, else
// /usr/bin/chromium. When there is none the test skips, or fails under CI=true; a
// $CHROMIUM_PATH that names no file always fails.
func requireChromium(t skipFataler, h host) string {
	t.Helper()
	if p := h.getenv("CHROMIUM_PATH"); p != "" {
		if h.isFile(p) {
			return p
		}
		t.Fatal("CHROMIUM_PATH=" + p + ": no such file; unset it or point it at the chromium binary")
		return ""
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := h.lookPath(name); err == nil {
			return p
		}
	}
	if h.isFile("/usr/bin/chromium") {
		return "/usr/bin/chromium"
	}
	if h.getenv("CI") == "true" {
		t.Fatal(chromiumMissing + " (CI=true: the browser tests must run, not skip)")
		return ""
	}
	t.Skip(chromiumMissing)
	return ""
}

// startRegistry runs a registry on 127.0.0.1 over a temporary data directory, with the
// repository's plugins.yaml and every bundled example published, as `serve --demo` does.
func startRegistry(t *testing.T) *registry {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "plugins.yaml"))
	if err != nil {
		t.Fatalf("read the repository's plugins.yaml: %v", err)
	}
	listPath := filepath.Join(dir, "plugins.yaml")
	if err := os.WriteFile(listPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	list, probs, err := index.LoadList(listPath)
	if err != nil || probs.HasErrors() {
		t.Fatalf("plugins.yaml: %v %v", err, probs.Errors())
	}
	st, err := store.Open(ctx, filepath.Join(dir, "data"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	srv := httptest.NewUnstartedServer(nil) // listens on 127.0.0.1
	publicURL := "http://" + srv.Listener.Addr().String()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := ingest.New(st, list, ingest.Config{PublicURL: publicURL, Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits()}, log)
	t.Cleanup(svc.Close) // its background writes end before the test data is removed
	publishExamples(t, ctx, svc)
	if err := svc.Rebuild(ctx); err != nil {
		t.Fatalf("rebuild index: %v", err)
	}
	srv.Config.Handler = server.New(server.Config{PublicURL: publicURL, MaxBodyBytes: 2 << 20}, svc, st, log)
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		_ = st.Close()
	})
	return &registry{URL: publicURL, List: list, Svc: svc}
}

// publishExamples packs and publishes every bundled example as the demo admin; a refused
// example fails the test with its problems.
func publishExamples(t *testing.T, ctx context.Context, svc *ingest.Service) {
	t.Helper()
	admin := ingest.Actor{Name: "demo", Admin: true}
	for _, name := range examples.Names() {
		var buf bytes.Buffer
		if err := examples.Pack(name, &buf); err != nil {
			t.Fatalf("pack example %s: %v", name, err)
		}
		_, err := svc.Publish(ctx, ingest.PublishInput{Package: &buf, Actor: admin})
		if rf, ok := errors.AsType[*ingest.Refusal](err); ok {
			t.Fatalf("example %s refused: %s %v", name, rf.Message, rf.Problems)
		}
		if err != nil {
			t.Fatalf("publish example %s: %v", name, err)
		}
	}
}

// startBrowser starts one headless chromium, reachable only through its pipe, that may
// load pages from loopback addresses only. It returns the browser's context; tabs are
// its children.
func startBrowser(t *testing.T, bin string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox, // the tests run as root in CI containers
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("no-proxy-server", true),
		// Loopback only: every host but 127.0.0.1, where the registry listens, fails to resolve.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.WindowSize(1280, 900),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium %s: %v", bin, err)
	}
	return ctx
}

// tab is one browser tab for one test, on a registry.
type tab struct {
	t   *testing.T
	ctx context.Context
	reg *registry
}

// newTab opens a tab with the test's timeout. When the test ends, pass or fail, it saves
// a full-page screenshot of what the tab shows.
func newTab(t *testing.T, browserCtx context.Context, reg *registry) *tab {
	t.Helper()
	timeoutCtx, cancelTimeout := context.WithTimeout(browserCtx, tabTimeout)
	ctx, cancel := chromedp.NewContext(timeoutCtx)
	t.Cleanup(func() { cancel(); cancelTimeout() })
	tb := &tab{t: t, ctx: ctx, reg: reg}
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open tab: %v", err)
	}
	t.Cleanup(tb.screenshot) // runs before the tab closes
	return tb
}

// do runs actions, failing the test on error.
func (tb *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	if err := chromedp.Do(tb.ctx, actions...); err != nil {
		tb.t.Fatalf("%s: %v", what, err)
	}
}

// open loads a page of the registry and waits for its body; it fails on a status other
// than 200.
func (tb *tab) open(path string) {
	tb.t.Helper()
	res, err := chromedp.Run(tb.ctx, chromedp.NavigateResponse(tb.reg.URL+path))
	if err != nil {
		tb.t.Fatalf("open %s: %v", path, err)
	}
	tb.wantOK(path, res)
}

// follow runs an action that navigates (a click, a form submit) and waits for the new
// page; it fails on a status other than 200.
func (tb *tab) follow(what string, action chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	res, err := chromedp.RunResponse(tb.ctx, action)
	if err != nil {
		tb.t.Fatalf("%s: %v", what, err)
	}
	tb.wantOK(what, res)
}

func (tb *tab) wantOK(what string, res *network.Response) {
	tb.t.Helper()
	if res == nil || res.Status != 200 {
		status := int64(0)
		if res != nil {
			status = res.Status
		}
		tb.t.Fatalf("%s: HTTP status %d, want 200", what, status)
	}
	tb.do("wait for the page", chromedp.WaitReady(chromedp.CSS("body")))
}

// eval runs a JavaScript expression in the page and decodes its value.
func eval[T any](tb *tab, expr string, opts ...chromedp.EvaluateOption) T {
	tb.t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// texts returns the trimmed text of every element the CSS selector matches, in order.
func (tb *tab) texts(selector string) []string {
	tb.t.Helper()
	return eval[[]string](tb, `Array.from(document.querySelectorAll(`+jsString(selector)+`), e => e.textContent.replace(/\s+/g, " ").trim())`)
}

// attrs returns the attribute name of every element the CSS selector matches, in order.
func (tb *tab) attrs(selector, name string) []string {
	tb.t.Helper()
	return eval[[]string](tb, `Array.from(document.querySelectorAll(`+jsString(selector)+`), e => e.getAttribute(`+jsString(name)+`) ?? "")`)
}

// grantClipboard lets the registry's pages read and write the clipboard without asking.
func (tb *tab) grantClipboard() {
	tb.t.Helper()
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		_, err := chromedp.CallBrowser(tb.ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name, AllowWithoutSanitization: true},
			Setting:    browser.PermissionSettingGranted,
			Origin:     tb.reg.URL,
		})
		if err != nil {
			tb.t.Fatalf("grant %s: %v", name, err)
		}
	}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// artifactsDir is $ARTIFACTS_DIR/e2e, else artifacts/e2e at the repository root.
func artifactsDir() string {
	if d := os.Getenv("ARTIFACTS_DIR"); d != "" {
		return filepath.Join(d, "e2e")
	}
	return filepath.Join("..", "artifacts", "e2e")
}

// screenshot saves a full-page PNG of the tab, named after the test, and logs its path.
func (tb *tab) screenshot() {
	png, err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Logf("screenshot: %v", err)
		return
	}
	dir := artifactsDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.t.Logf("screenshot: %v", err)
		return
	}
	name := strings.Trim(unsafeName.ReplaceAllString(tb.t.Name(), "_"), "_") + ".png"
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tb.t.Logf("screenshot: %v", err)
		return
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	tb.t.Logf("screenshot: %s", path)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\u2028", `\u2028`, "\u2029", `\u2029`)
	return `"` + r.Replace(s) + `"`
}

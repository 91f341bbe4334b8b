package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pluginyard/registry/problem"
)

var publishHelp = help{
	Summary: "upload a package to a registry (token or GitHub OIDC)",
	Usage:   "registry publish FILE [--bundle BUNDLE] --registry URL [--audience AUD]",
	About: `Uploads a package (.tar.gz) to a registry, with an optional detached Sigstore bundle
(e.g. the bundle-path output of actions/attest-build-provenance).

Credentials, in this order:
  REGISTRY_TOKEN       a publisher token (registry token create) or an upload token;
  GitHub Actions OIDC  when ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN
                       are set (the workflow needs "permissions: id-token: write"): the job's
                       identity token is exchanged at the registry for a 15-minute upload token.
The registry URL may also come from REGISTRY_URL.

Exit status: 0 published (or identical bytes already published), 1 refused by the
registry (every problem is printed), 2 usage, file, network or server errors.`,
	Example: "REGISTRY_TOKEN=pyr_... registry publish acme-hello-1.0.0.tar.gz --registry https://plugins.example.com\n" +
		"registry publish acme-hello-1.0.0.tar.gz --bundle acme-hello-1.0.0.sigstore.json --registry https://plugins.example.com",
}

// publishArgs is what `registry publish` was told.
type publishArgs struct {
	file     string
	bundle   string
	registry string // without a trailing slash
	audience string
}

// Timeouts: the token calls are small; an upload may be large, so only the wait for the
// response after the body is sent is bounded.
const (
	tokenCallTimeout      = 30 * time.Second
	publishHeaderTimeout  = 5 * time.Minute
	maxPublishAnswerBytes = 1 << 20
)

// cmdPublish is `registry publish FILE [--bundle B] --registry URL`.
func cmdPublish(ctx context.Context, c *cli, args []string) int {
	a, code, ok := parsePublishArgs(c, args)
	if !ok {
		return code
	}
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: publishHeaderTimeout}}
	token, err := publishToken(ctx, c, client, a)
	if err == nil {
		var res *publishResult
		if res, err = upload(ctx, c, client, a, token); err == nil {
			printPublished(c, a, res)
			return exitOK
		}
	}
	return reportPublishError(c, err)
}

func parsePublishArgs(c *cli, args []string) (publishArgs, int, bool) {
	var a publishArgs
	fs := c.flags("publish")
	fs.StringVar(&a.bundle, "bundle", "", "detached Sigstore bundle (JSON `FILE`) to send with the package")
	fs.StringVar(&a.registry, "registry", envDefault(c, "REGISTRY_URL", ""), "registry base `URL`, e.g. https://plugins.example.com (REGISTRY_URL); required")
	fs.StringVar(&a.audience, "audience", "", "OIDC `AUDIENCE` to request; default the registry URL (it must equal the registry's --oidc-audience)")
	pos, err := parse(fs, args)
	if err != nil {
		return a, parseExit(err), false
	}
	if len(pos) != 1 {
		return a, c.usageError("publish", "expected one package file, found %d arguments", len(pos)), false
	}
	a.file = pos[0]
	a.registry = strings.TrimRight(a.registry, "/")
	if u, err := url.Parse(a.registry); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return a, c.usageError("publish", "--registry %q: expected the registry's absolute http(s) base URL, e.g. https://plugins.example.com (or set REGISTRY_URL)", a.registry), false
	}
	if a.audience == "" {
		a.audience = a.registry
	}
	return a, exitOK, true
}

// refusedError is a 4xx answer of the registry: the request was understood and refused.
type refusedError struct {
	op       string
	status   int
	message  string
	problems problem.List
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("%s refused (HTTP %d): %s", e.op, e.status, e.message)
}

// reportPublishError prints err; a refusal lists every problem and exits 1, anything
// else (network, server, files) exits 2.
func reportPublishError(c *cli, err error) int {
	fmt.Fprintf(c.stderr, "registry publish: %v\n", err)
	var rf *refusedError
	if !errors.As(err, &rf) {
		return exitUsage
	}
	printProblems(c.stderr, rf.problems)
	return exitInvalid
}

// printProblems lists problems grouped by file, then sorted by path within a file.
func printProblems(w io.Writer, probs problem.List) {
	byFile := map[string]problem.List{}
	var files []string
	for _, p := range probs {
		if _, seen := byFile[p.File]; !seen {
			files = append(files, p.File)
		}
		byFile[p.File] = append(byFile[p.File], p)
	}
	sort.Strings(files)
	for _, f := range files { // "" sorts first: problems of no file, without a heading
		if f != "" {
			fmt.Fprintf(w, "%s:\n", f)
		}
		list := byFile[f]
		sort.SliceStable(list, func(i, j int) bool { return list[i].Path < list[j].Path })
		for _, p := range list {
			where := ""
			if p.Path != "" {
				where = p.Path + ": "
			}
			fmt.Fprintf(w, "  %s%s [%s] %s\n", where, p.Severity, p.Rule, p.Message)
		}
	}
}

// apiAnswer is the registry's error body.
type apiAnswer struct {
	Error    string       `json:"error"`
	Problems problem.List `json:"problems"`
}

// answerError turns a non-success response into an error: 4xx is a refusal, the rest is
// a server error.
func answerError(op string, resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxPublishAnswerBytes))
	var ans apiAnswer
	if err := json.Unmarshal(body, &ans); err != nil || ans.Error == "" {
		ans.Error = strings.TrimSpace(string(body))
		if ans.Error == "" {
			ans.Error = http.StatusText(resp.StatusCode)
		}
	}
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		return &refusedError{op: op, status: resp.StatusCode, message: ans.Error, problems: ans.Problems}
	}
	return fmt.Errorf("%s failed: the registry answered HTTP %d: %s (a server-side problem: retry, or tell the registry's operators)",
		op, resp.StatusCode, ans.Error)
}

// publishResult is the registry's answer to an accepted publish.
type publishResult struct {
	ID         string   `json:"id"`
	Version    string   `json:"version"`
	Kind       string   `json:"kind"`
	SHA256     string   `json:"sha256"`
	Size       int64    `json:"size"`
	PackageURL string   `json:"package_url"`
	Warnings   []string `json:"warnings"`
	created    bool
}

func printPublished(c *cli, a publishArgs, r *publishResult) {
	verb := "published"
	if !r.created {
		verb = "already published (identical bytes; nothing changed)"
	}
	fmt.Fprintf(c.stdout, "%s %s@%s (%s, %d bytes)\n", verb, r.ID, r.Version, r.Kind, r.Size)
	fmt.Fprintf(c.stdout, "  package: %s\n  sha256:  %s\n  page:    %s\n", r.PackageURL, r.SHA256, pageURL(a.registry, r))
	for _, w := range r.Warnings {
		fmt.Fprintf(c.stderr, "warning: %s\n", w)
	}
}

func pageURL(registry string, r *publishResult) string {
	if r.Kind == "extension" {
		return registry + "/extensions/" + r.ID
	}
	return registry + "/plugins/" + url.PathEscape(r.ID)
}

// upload streams the multipart body (bundle first, then the package) to
// POST <registry>/api/v1/packages.
func upload(ctx context.Context, c *cli, client *http.Client, a publishArgs, token string) (*publishResult, error) {
	f, err := os.Open(a.file)
	if err != nil {
		return nil, fmt.Errorf("package: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("package %s: expected a regular .tar.gz file (build one with `registry pack`)", a.file)
	}
	var bundle []byte
	if a.bundle != "" {
		if bundle, err = os.ReadFile(a.bundle); err != nil {
			return nil, fmt.Errorf("--bundle: %w", err)
		}
	}
	pkg := io.TeeReader(f, newProgress(c.stderr, st.Size()))
	body, err := multipartBody(filepath.Base(a.file), pkg, st.Size(), filepath.Base(a.bundle), bundle)
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.registry+"/api/v1/packages", body.r)
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	// A known length lets the registry refuse a body over its limit before a byte is sent.
	req.ContentLength = body.size
	req.Header.Set("Content-Type", body.contentType)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	return sendPublish(client, req)
}

func sendPublish(client *http.Client, req *http.Request) (*publishResult, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("publish to %s: %w", req.URL.Host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return nil, answerError("publish", resp)
	}
	var r publishResult
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxPublishAnswerBytes)).Decode(&r); err != nil {
		return nil, fmt.Errorf("publish: the registry answered HTTP %d with an unreadable body: %w", resp.StatusCode, err)
	}
	r.created = resp.StatusCode == http.StatusCreated
	return &r, nil
}

// uploadBody is a multipart/form-data body of known length.
type uploadBody struct {
	r           io.Reader
	size        int64
	contentType string
}

// multipartBody frames the "bundle" field (when there is one) and then the "package" file
// field of pkgSize bytes, so the registry can check the bundle while it reads the package.
// The framing is written ahead and the package streamed between, so the body's length is
// known without reading the package.
func multipartBody(pkgName string, pkg io.Reader, pkgSize int64, bundleName string, bundle []byte) (uploadBody, error) {
	var head, tail bytes.Buffer
	mw := multipart.NewWriter(&head)
	if bundle != nil {
		w, err := mw.CreatePart(filePartHeader("bundle", bundleName, "application/json"))
		if err != nil {
			return uploadBody{}, err
		}
		if _, err := w.Write(bundle); err != nil {
			return uploadBody{}, err
		}
	}
	if _, err := mw.CreatePart(filePartHeader("package", pkgName, "application/gzip")); err != nil {
		return uploadBody{}, err
	}
	contentType := mw.FormDataContentType()
	headBytes := bytes.Clone(head.Bytes())
	if err := closingBoundary(mw, &head, &tail); err != nil {
		return uploadBody{}, err
	}
	r := io.MultiReader(bytes.NewReader(headBytes), io.LimitReader(pkg, pkgSize), &tail)
	return uploadBody{r: r, size: int64(len(headBytes)) + pkgSize + int64(tail.Len()), contentType: contentType}, nil
}

// closingBoundary writes what mw writes on Close (the end of the last part and the final
// boundary) into tail instead of head.
func closingBoundary(mw *multipart.Writer, head, tail *bytes.Buffer) error {
	n := head.Len()
	if err := mw.Close(); err != nil {
		return err
	}
	tail.Write(head.Bytes()[n:])
	head.Truncate(n)
	return nil
}

func filePartHeader(field, name, contentType string) textproto.MIMEHeader {
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": field, "filename": name}))
	h.Set("Content-Type", contentType)
	return h
}

// publishToken returns the bearer token to publish with: $REGISTRY_TOKEN, else an upload
// token obtained through GitHub Actions OIDC.
func publishToken(ctx context.Context, c *cli, client *http.Client, a publishArgs) (string, error) {
	if t := strings.TrimSpace(c.getenv("REGISTRY_TOKEN")); t != "" {
		return t, nil
	}
	reqURL, reqToken := c.getenv("ACTIONS_ID_TOKEN_REQUEST_URL"), c.getenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN")
	if reqURL == "" || reqToken == "" {
		return "", errors.New("no credentials: set REGISTRY_TOKEN to a publisher token, or run in GitHub Actions with " +
			"`permissions: id-token: write` on the job for trusted publishing (ACTIONS_ID_TOKEN_REQUEST_URL is unset)")
	}
	ctx, cancel := context.WithTimeout(ctx, tokenCallTimeout)
	defer cancel()
	jwt, err := actionsIDToken(ctx, client, reqURL, reqToken, a.audience)
	if err != nil {
		return "", err
	}
	ex, err := exchangeOIDC(ctx, client, a.registry, jwt)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(c.stderr, "trusted publishing: upload token for %s (expires %s)\n",
		strings.Join(ex.Scope, ", "), ex.ExpiresAt.UTC().Format(time.RFC3339))
	return ex.Token, nil
}

// actionsIDToken asks the GitHub Actions runtime for the job's OIDC token with audience.
func actionsIDToken(ctx context.Context, client *http.Client, reqURL, reqToken, audience string) (string, error) {
	u, err := url.Parse(reqURL)
	if err != nil {
		return "", fmt.Errorf("ACTIONS_ID_TOKEN_REQUEST_URL: %w", err)
	}
	q := u.Query()
	q.Set("audience", audience)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("GitHub Actions OIDC token: %w", err)
	}
	req.Header.Set("Authorization", "bearer "+reqToken)
	req.Header.Set("Accept", "application/json")
	var out struct {
		Value string `json:"value"`
	}
	if err := getJSON(client, req, "GitHub Actions OIDC token request", &out); err != nil {
		return "", err
	}
	if out.Value == "" {
		return "", errors.New(`GitHub Actions OIDC token request: expected {"value": "<jwt>"}, found no value`)
	}
	return out.Value, nil
}

// oidcExchange is the registry's answer at POST /api/v1/auth/oidc.
type oidcExchange struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
	Scope     []string  `json:"scope"`
}

// exchangeOIDC trades the job's identity token for an upload token at the registry.
func exchangeOIDC(ctx context.Context, client *http.Client, registry, jwt string) (*oidcExchange, error) {
	body, err := json.Marshal(map[string]string{"token": jwt})
	if err != nil {
		return nil, fmt.Errorf("OIDC exchange: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, registry+"/api/v1/auth/oidc", strings.NewReader(string(body)))
	if err != nil {
		return nil, fmt.Errorf("OIDC exchange: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	var ex oidcExchange
	if err := getJSON(client, req, "OIDC token exchange", &ex); err != nil {
		return nil, err
	}
	if ex.Token == "" {
		return nil, errors.New("OIDC token exchange: the registry answered without a token")
	}
	return &ex, nil
}

// getJSON sends req and decodes a 200 answer into v; other answers become errors.
func getJSON(client *http.Client, req *http.Request, op string, v any) error {
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return answerError(op, resp)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxPublishAnswerBytes)).Decode(v); err != nil {
		return fmt.Errorf("%s: unreadable answer: %w", op, err)
	}
	return nil
}

// Progress is shown for packages of at least progressMinBytes: a line at every tenth of
// the file, or after progressEvery without one.
const (
	progressMinBytes = 4 << 20
	progressEvery    = 5 * time.Second
)

// progress counts the package bytes handed to the upload and reports them on w.
type progress struct {
	w        io.Writer
	total    int64
	sent     int64
	nextTick int64 // the next tenth (1..10) to report
	last     time.Time
	now      func() time.Time
}

// newProgress returns a progress writer for a file of total bytes; small files report nothing.
func newProgress(w io.Writer, total int64) io.Writer {
	if total < progressMinBytes {
		return io.Discard
	}
	return &progress{w: w, total: total, nextTick: 1, now: time.Now, last: time.Now()}
}

func (p *progress) Write(b []byte) (int, error) {
	p.sent += int64(len(b))
	tick := p.sent * 10 / p.total
	if tick < p.nextTick && p.now().Sub(p.last) < progressEvery {
		return len(b), nil
	}
	p.nextTick = max(tick+1, p.nextTick)
	p.last = p.now()
	fmt.Fprintf(p.w, "uploading: %s of %s (%d%%)\n", mib(p.sent), mib(p.total), p.sent*100/p.total)
	return len(b), nil
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

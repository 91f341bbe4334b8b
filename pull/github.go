// Package pull ingests packages from the GitHub releases of the repositories that
// plugins.yaml lists: a GitHub REST client with conditional requests and rate-limit
// handling, and a sync loop that sends every release through the same ingest pipeline as a
// push (actor "sync").
//
// Which hosts are contacted, and why that is safe: only the configured API base
// (REGISTRY_GITHUB_API) and, for the asset URLs that API returns in browser_download_url,
// the download hosts of the configuration (ClientConfig.DownloadHosts; by default the API
// host and GitHub's release-asset hosts, DefaultDownloadHosts). The host is checked on the
// first URL and on every redirect hop, so neither a release nor a redirect can point sync
// at the operator's own network. The downloaded bytes are not trusted at all: they go
// through the whole publish pipeline (archive rules, manifest, file name, checksums,
// signing policy and pins), exactly like an upload. A download URL must be absolute http(s)
// without credentials, https whenever the API base is https; redirects (GitHub sends assets
// from its object storage) are followed, at most five, never downgraded to plain http, and
// the whole download is capped in size (100 MiB, the host's own limit) and in time. The API
// token is sent to the API base only, never to a download host.
//
// A rate limit GitHub answers (Retry-After, X-RateLimit-Reset) defers only the repository
// it was answered for, and never by more than MaxRateLimitDelay, whatever the server says.
package pull

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pluginyard/registry/hostlist"
)

// Limits and timeouts of the client.
const (
	DefaultAPI             = "https://api.github.com"
	DefaultAPITimeout      = 30 * time.Second
	DefaultDownloadTimeout = 5 * time.Minute
	DefaultMaxAsset        = 100 << 20 // the Kandev host's download cap
	maxAPIBody             = 4 << 20   // a release with hundreds of assets is well below
	maxRedirects           = 5
	// MaxRateLimitDelay caps any delay a server asks for: a Retry-After of 99999999999
	// seconds or an X-RateLimit-Reset in the year 9999 waits this long, then sync asks again.
	MaxRateLimitDelay = time.Hour
)

// DefaultDownloadHosts are the hosts GitHub serves release assets from; with the API host
// they are the download hosts when ClientConfig.DownloadHosts is empty.
var DefaultDownloadHosts = []string{"github.com", "objects.githubusercontent.com", "release-assets.githubusercontent.com"}

// DownloadHostsSetting names the setting an operator changes to allow another download
// host; refusals cite it.
const DownloadHostsSetting = "--sync-download-hosts (REGISTRY_SYNC_DOWNLOAD_HOSTS)"

// Release is the part of a GitHub release that sync reads.
type Release struct {
	TagName string  `json:"tag_name"`
	HTMLURL string  `json:"html_url"`
	Assets  []Asset `json:"assets"`
}

// Asset is one file attached to a release.
type Asset struct {
	Name               string `json:"name"`
	Size               int64  `json:"size"`
	BrowserDownloadURL string `json:"browser_download_url"`
}

// Asset returns the release asset with exactly this name.
func (r *Release) Asset(name string) (Asset, bool) {
	for _, a := range r.Assets {
		if a.Name == name {
			return a, true
		}
	}
	return Asset{}, false
}

// Repository is the part of GET /repos/{owner}/{repo} that sync reads.
type Repository struct {
	ID              int64      `json:"id"`
	FullName        string     `json:"full_name"`
	StargazersCount int        `json:"stargazers_count"`
	PushedAt        *time.Time `json:"pushed_at"`
	Owner           struct {
		ID    int64  `json:"id"`
		Login string `json:"login"`
	} `json:"owner"`
}

// RateLimitError is GitHub asking the client to wait: a 403 or 429 with
// X-RateLimit-Remaining: 0 (until X-RateLimit-Reset) or Retry-After.
type RateLimitError struct {
	Until time.Time
}

func (e *RateLimitError) Error() string {
	return "github: rate limited until " + e.Until.UTC().Format(time.RFC3339)
}

// StatusError is an unexpected HTTP status from GitHub.
type StatusError struct {
	URL     string
	Status  int
	Message string // GitHub's "message", when it sent one
}

func (e *StatusError) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("github: GET %s: %d %s: %s", e.URL, e.Status, http.StatusText(e.Status), e.Message)
	}
	return fmt.Sprintf("github: GET %s: %d %s", e.URL, e.Status, http.StatusText(e.Status))
}

// TooLargeError is a download over the size cap.
type TooLargeError struct {
	URL   string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("github: %s is larger than the %d-byte limit", e.URL, e.Limit)
}

// ClientConfig configures a Client; zero values take the defaults.
type ClientConfig struct {
	API             string // API base, default https://api.github.com
	Token           string // sent as a Bearer token to the API base only
	UserAgent       string
	APITimeout      time.Duration
	DownloadTimeout time.Duration
	// Transport carries every request; nil uses a clone of http.DefaultTransport.
	Transport http.RoundTripper
	// DownloadHosts are the only hosts assets are downloaded from, on the first URL and
	// after every redirect: "host" matches that host on the scheme's default port,
	// "host:port" exactly, case-insensitively. Empty: the API host and DefaultDownloadHosts.
	DownloadHosts []string
}

// Client is a small GitHub REST client. It is safe for concurrent use.
type Client struct {
	base  *url.URL
	token string
	ua    string
	api   *http.Client
	dl    *http.Client
	cfg   ClientConfig
	hosts hostlist.List // download hosts
	now   func() time.Time

	mu        sync.Mutex
	exhausted map[string]time.Time // per repository: X-RateLimit-Reset of an answer that said Remaining: 0
}

// NewClient validates the API base and returns a client.
func NewClient(cfg ClientConfig) (*Client, error) {
	if cfg.API == "" {
		cfg.API = DefaultAPI
	}
	base, err := url.Parse(strings.TrimRight(cfg.API, "/"))
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" || base.User != nil {
		return nil, fmt.Errorf("pull: API base %q: expected an absolute http(s) URL without credentials, such as %s", cfg.API, DefaultAPI)
	}
	if cfg.APITimeout <= 0 {
		cfg.APITimeout = DefaultAPITimeout
	}
	if cfg.DownloadTimeout <= 0 {
		cfg.DownloadTimeout = DefaultDownloadTimeout
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "pluginyard-registry-sync"
	}
	if cfg.Transport == nil {
		cfg.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	c := &Client{base: base, token: cfg.Token, ua: cfg.UserAgent, cfg: cfg, now: time.Now,
		hosts: downloadHosts(base, cfg.DownloadHosts), exhausted: map[string]time.Time{}}
	c.api = &http.Client{Transport: cfg.Transport, CheckRedirect: c.sameHost}
	c.dl = &http.Client{Transport: cfg.Transport, CheckRedirect: c.noDowngrade}
	return c, nil
}

// sameHost keeps API redirects (a renamed repository answers 301 to /repositories/{id})
// on the API base.
func (c *Client) sameHost(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("github: more than %d redirects", maxRedirects)
	}
	if req.URL.Scheme != c.base.Scheme || req.URL.Host != c.base.Host {
		return fmt.Errorf("github: API redirect to %s refused: only %s is contacted", req.URL.Redacted(), c.base.Host)
	}
	return nil
}

// downloadHosts is the allow-list of download hosts: the configured ones, else the API
// host and DefaultDownloadHosts.
func downloadHosts(base *url.URL, configured []string) hostlist.List {
	if len(configured) == 0 {
		configured = append([]string{base.Host}, DefaultDownloadHosts...)
	}
	return hostlist.New(configured)
}

// noDowngrade follows download redirects to the download hosts only, and never to plain
// http once https.
func (c *Client) noDowngrade(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("github: more than %d redirects", maxRedirects)
	}
	if err := c.checkDownloadURL(req.URL); err != nil {
		return err
	}
	if via[len(via)-1].URL.Scheme == "https" && req.URL.Scheme != "https" {
		return fmt.Errorf("github: redirect from https to %s refused", req.URL.Redacted())
	}
	return nil
}

func (c *Client) checkDownloadURL(u *url.URL) error {
	switch {
	case u.Scheme != "https" && u.Scheme != "http", u.Host == "", u.User != nil:
		return fmt.Errorf("github: download URL %s refused: expected an absolute http(s) URL without credentials", u.Redacted())
	case u.Scheme == "http" && c.base.Scheme == "https":
		return fmt.Errorf("github: download URL %s refused: plain http while the API is https", u.Redacted())
	case !c.hosts.Allows(u):
		return fmt.Errorf("github: download from host %q refused (%s): it is not among the download hosts %s; "+
			"if the release assets really live there, add the host to %s", u.Host, u.Redacted(), c.hosts, DownloadHostsSetting)
	}
	return nil
}

// Repository reads GET /repos/{repo}. With etag set, an unchanged answer (304) returns
// modified false and nothing else.
func (c *Client) Repository(ctx context.Context, repo, etag string) (r *Repository, newETag string, modified bool, err error) {
	r = new(Repository)
	newETag, modified, err = c.getJSON(ctx, repo, repoPath(repo), etag, r)
	if err != nil || !modified {
		return nil, newETag, modified, err
	}
	return r, newETag, true, nil
}

// LatestRelease reads GET /repos/{repo}/releases/latest (the newest release that is
// neither a draft nor a prerelease). A repository without one is a *StatusError 404.
func (c *Client) LatestRelease(ctx context.Context, repo, etag string) (r *Release, newETag string, modified bool, err error) {
	r = new(Release)
	newETag, modified, err = c.getJSON(ctx, repo, repoPath(repo)+"/releases/latest", etag, r)
	if err != nil || !modified {
		return nil, newETag, modified, err
	}
	return r, newETag, true, nil
}

// getJSON does one conditional API GET for repo and decodes a 200 answer into v.
func (c *Client) getJSON(ctx context.Context, repo, path, etag string, v any) (string, bool, error) {
	if until := c.exhaustedUntil(repo); !until.IsZero() {
		return "", false, &RateLimitError{Until: until}
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.APITimeout)
	defer cancel()
	u := c.base.String() + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", false, fmt.Errorf("github: %w", err)
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", c.ua)
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := c.api.Do(req)
	if err != nil {
		return "", false, fmt.Errorf("github: GET %s: %w", u, err)
	}
	defer res.Body.Close()
	return c.readJSON(res, repo, u, etag, v)
}

func (c *Client) readJSON(res *http.Response, repo, u, etag string, v any) (string, bool, error) {
	c.noteRemaining(res, repo)
	body, err := io.ReadAll(io.LimitReader(res.Body, maxAPIBody+1))
	if err != nil {
		return "", false, fmt.Errorf("github: GET %s: %w", u, err)
	}
	if until, ok := rateLimited(res, c.now()); ok {
		return "", false, &RateLimitError{Until: until}
	}
	switch {
	case res.StatusCode == http.StatusNotModified:
		return etag, false, nil
	case res.StatusCode != http.StatusOK:
		var msg struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(body, &msg) // best effort: the status says enough
		return "", false, &StatusError{URL: u, Status: res.StatusCode, Message: truncate(msg.Message, 200)}
	case len(body) > maxAPIBody:
		return "", false, fmt.Errorf("github: GET %s: answer larger than %d bytes", u, maxAPIBody)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return "", false, fmt.Errorf("github: GET %s: decode: %w", u, err)
	}
	return res.Header.Get("ETag"), true, nil
}

// noteRemaining remembers an exhausted quota so that repo's next call waits without
// asking; other repositories still ask (and learn their own deadline).
func (c *Client) noteRemaining(res *http.Response, repo string) {
	if res.Header.Get("X-RateLimit-Remaining") != "0" {
		return
	}
	if reset, err := strconv.ParseInt(res.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
		now := c.now()
		c.mu.Lock()
		c.exhausted[repoKey(repo)] = capDelay(unixTime(reset), now)
		c.mu.Unlock()
	}
}

// exhaustedUntil is repo's remembered deadline, or zero once it has passed.
func (c *Client) exhaustedUntil(repo string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := repoKey(repo)
	until, ok := c.exhausted[k]
	if ok && !c.now().Before(until) {
		delete(c.exhausted, k)
		return time.Time{}
	}
	return until
}

// repoKey is owner/name with the owner lower-cased, as GitHub compares them.
func repoKey(repo string) string {
	owner, name, _ := strings.Cut(repo, "/")
	return strings.ToLower(owner) + "/" + name
}

// capDelay bounds a server-sent deadline to [now, now+MaxRateLimitDelay].
func capDelay(until, now time.Time) time.Time {
	if limit := now.Add(MaxRateLimitDelay); until.After(limit) {
		return limit.UTC()
	}
	if until.Before(now) {
		return now.UTC()
	}
	return until.UTC()
}

// unixTime is Unix seconds as a time, saturating far outside ±year 9999 (capDelay then
// bounds it anyway).
func unixTime(secs int64) time.Time {
	const maxSecs = 253402300799 // 9999-12-31T23:59:59Z
	return time.Unix(min(max(secs, -maxSecs), maxSecs), 0).UTC()
}

// rateLimited reads GitHub's rate-limit answers: a 403 or 429 with Retry-After (seconds or
// an HTTP date) or with X-RateLimit-Remaining: 0 (until X-RateLimit-Reset, Unix seconds).
// A bare 429 waits a minute. Every deadline is capped at MaxRateLimitDelay from now.
func rateLimited(res *http.Response, now time.Time) (time.Time, bool) {
	if res.StatusCode != http.StatusForbidden && res.StatusCode != http.StatusTooManyRequests {
		return time.Time{}, false
	}
	if ra := strings.TrimSpace(res.Header.Get("Retry-After")); ra != "" {
		if secs, err := strconv.ParseUint(ra, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
			// compared before multiplying: a huge count of seconds overflows a Duration
			return now.Add(time.Duration(min(secs, uint64(MaxRateLimitDelay/time.Second))) * time.Second).UTC(), true
		}
		if t, err := http.ParseTime(ra); err == nil {
			return capDelay(t, now), true
		}
	}
	if res.Header.Get("X-RateLimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(res.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			return capDelay(unixTime(reset), now), true
		}
		return now.Add(time.Minute).UTC(), true
	}
	if res.StatusCode == http.StatusTooManyRequests {
		return now.Add(time.Minute).UTC(), true
	}
	return time.Time{}, false
}

// Download copies the file at rawURL (a browser_download_url) to w, refusing more than
// limit bytes. No credentials are sent.
func (c *Client) Download(ctx context.Context, rawURL string, w io.Writer, limit int64) (int64, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0, fmt.Errorf("github: download URL %q: %w", rawURL, err)
	}
	if err := c.checkDownloadURL(u); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.DownloadTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, fmt.Errorf("github: %w", err)
	}
	req.Header.Set("Accept", "application/octet-stream")
	req.Header.Set("User-Agent", c.ua)
	res, err := c.dl.Do(req)
	if err != nil {
		return 0, fmt.Errorf("github: download %s: %w", u.Redacted(), err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 0, &StatusError{URL: u.Redacted(), Status: res.StatusCode}
	}
	if res.ContentLength > limit {
		return 0, &TooLargeError{URL: u.Redacted(), Limit: limit}
	}
	n, err := io.Copy(w, io.LimitReader(res.Body, limit+1))
	if err != nil {
		return n, fmt.Errorf("github: download %s: %w", u.Redacted(), err)
	}
	if n > limit {
		return n, &TooLargeError{URL: u.Redacted(), Limit: limit}
	}
	return n, nil
}

// repoPath is /repos/{owner}/{name}, each part escaped.
func repoPath(repo string) string {
	owner, name, _ := strings.Cut(repo, "/")
	return "/repos/" + url.PathEscape(owner) + "/" + url.PathEscape(name)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

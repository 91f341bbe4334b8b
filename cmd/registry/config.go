package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/pull"
	"github.com/pluginyard/registry/server"
)

// Config is everything `registry serve` is told, from flags over environment over defaults.
type Config struct {
	Addr    string
	DataDir string // this replica's local state (and, by default, its database and blobs)
	// Database and Blobs are --database and --blobs ("" is the default under DataDir);
	// BlobsRedirect is --blobs-redirect (S3 only).
	Database      string
	Blobs         string
	BlobsRedirect bool
	PluginsPath   string
	PublicURL     string
	AdminToken    string // REGISTRY_ADMIN_TOKEN (environment only: flags show in ps); serve warns when shorter than minAdminToken
	MaxBodyBytes  int64
	Demo          bool
	SiteName      string
	// MaxIndexBytes is the most bytes any index document may have; IndexOrder how a
	// partial index.json chooses entries after official and featured ones (see
	// docs/index-at-scale.md).
	MaxIndexBytes int64
	IndexOrder    string

	SigstoreTrustedRoot string
	SigstoreTlog        int
	SigstoreTimestamps  int
	SigstoreSCTs        int

	OIDCIssuer   string
	OIDCAudience string

	urlHost       string // the public URL's host when it is derived from an --addr of port 0
	audienceIsURL bool   // OIDCAudience is the public URL (no --oidc-audience)

	GitHubAPI    string
	GitHubToken  string
	SyncInterval time.Duration
	// SyncDownloadHosts are the only hosts sync downloads release assets from (after every
	// redirect too); empty means the GitHub API host and GitHub's release-asset hosts.
	SyncDownloadHosts []string
	// ScrubInterval is how long one background pass over every blob (re-hashing each) takes;
	// 0 disables the scrub.
	ScrubInterval time.Duration
	// PreviewHosts are the only hosts preview images are copied from (after every redirect
	// too); empty means ingest.DefaultPreviewHosts.
	PreviewHosts []string

	LogFormat string
	// LogKey is the transparency log's private key (PRIVATE+KEY+…) or the file holding
	// it; empty means DataDir/log.key, generated on first start.
	LogKey string
	// ReporterKey is the file of the key report reporters are hashed under; empty means
	// DataDir/reporter.key, made by the first report.
	ReporterKey string

	// Rate limits in requests per minute per client (IP, and token where one is sent);
	// 0 turns a class off.
	RateAuth    int
	RatePublish int
	RateSearch  int
	// RateHostBuild is host-aware documents built (class cache misses) per minute per IP.
	RateHostBuild int
	// RateReport is reports filed (page form and API) per minute per IP.
	RateReport int
	TrustProxy bool

	// HostCaps is the Kandev host capability table file of host-aware documents (--host-caps);
	// empty means ingest.DefaultHostCaps. hostCaps is it parsed by validate.
	HostCaps string
	hostCaps *ingest.HostCaps

	// Webhooks is the webhooks file (--webhooks, docs/webhooks.md); empty sends none.
	// webhooks is it parsed by validate, its secrets read through getenv.
	Webhooks string
	webhooks *ingest.WebhookConfig
	getenv   func(string) string

	// problems are the flag and environment values that did not parse; validate reports
	// them with every other problem, so one start names every mistake.
	problems []error
}

// Expected forms, shown when a value does not parse.
const (
	formRate      = "a whole number of requests per minute such as 60, or 0 to turn the limit off"
	formThreshold = "a whole number, 0 or more, such as 1"
	formBool      = "true or false"
)

// bindServeFlags declares serve's flags; each flag's environment variable sets it unless
// the flag is given. A malformed value, from either, is kept in cfg.problems rather than
// replaced by the default.
func bindServeFlags(fs *flag.FlagSet, c *cli, cfg *Config) {
	b := &binder{fs: fs, c: c, problems: &cfg.problems}
	b.addr(&cfg.Addr, "addr", "REGISTRY_ADDR", "127.0.0.1:8080", "listen address")
	b.str(&cfg.DataDir, "data", "REGISTRY_DATA", "./data", "data directory: local state (documents, keys, spool), and the SQLite file and blobs unless --database and --blobs say otherwise")
	b.str(&cfg.Database, "database", "REGISTRY_DATABASE", "", databaseUsage)
	b.str(&cfg.Blobs, "blobs", "REGISTRY_BLOBS", "", blobsUsage)
	b.bool(&cfg.BlobsRedirect, "blobs-redirect", "REGISTRY_BLOBS_REDIRECT", redirectUsage)
	b.str(&cfg.PluginsPath, "plugins", "REGISTRY_PLUGINS", "./plugins.yaml", "curated list")
	b.str(&cfg.LogKey, "log-key", "REGISTRY_LOG_KEY", "", "transparency log signing key: the key itself or a file holding it; default DATA/log.key, generated on first start")
	b.str(&cfg.ReporterKey, "reporter-key", "REGISTRY_REPORTER_KEY", "", "file of the key reporters' addresses are hashed under (64 hex digits; the same on every replica); default DATA/reporter.key, made by the first report")
	b.url(&cfg.PublicURL, "public-url", "REGISTRY_PUBLIC_URL", "", "https://plugins.example.com", "", "base of every absolute URL emitted; default http://<addr>")
	b.int64(&cfg.MaxBodyBytes, "max-body", "REGISTRY_MAX_BODY", 100<<20, 1<<20,
		"a whole number of bytes, at least 1048576 (1 MiB), such as 104857600", "publish upload limit in bytes")
	b.bool(&cfg.Demo, "demo", "REGISTRY_DEMO", "publish the bundled examples when the data directory is empty or holds only some of them")
	b.str(&cfg.SiteName, "site-name", "REGISTRY_SITE_NAME", "Plugin Registry", "name shown on pages and in index.json source")
	b.int64(&cfg.MaxIndexBytes, "index-max-bytes", "REGISTRY_INDEX_MAX_BYTES", index.MaxKandevSize, 64<<10,
		"a whole number of bytes, at least 65536 (64 KiB), such as 5242880", "the most bytes index.json, each shard and curupira/index.json may have (hosts refuse larger); past it the size policy compacts, then chooses entries (docs/index-at-scale.md)")
	b.enum(&cfg.IndexOrder, "index-order", "REGISTRY_INDEX_ORDER", "which entries a partial index.json keeps after official and featured ones: the most downloaded or the most recently updated", index.OrderDownloads, index.OrderRecent)
	b.str(&cfg.SigstoreTrustedRoot, "sigstore-trusted-root", "REGISTRY_SIGSTORE_TRUSTED_ROOT", "", "trusted_root.json for offline Sigstore verification")
	b.int(&cfg.SigstoreTlog, "sigstore-tlog-threshold", "REGISTRY_SIGSTORE_TLOG_THRESHOLD", 1, formThreshold, "transparency log entries required")
	b.int(&cfg.SigstoreTimestamps, "sigstore-timestamp-threshold", "REGISTRY_SIGSTORE_TIMESTAMP_THRESHOLD", 1, formThreshold, "verified timestamps required")
	b.int(&cfg.SigstoreSCTs, "sigstore-sct-threshold", "REGISTRY_SIGSTORE_SCT_THRESHOLD", 1, formThreshold, "signed certificate timestamps required")
	b.url(&cfg.OIDCIssuer, "oidc-issuer", "REGISTRY_OIDC_ISSUER", "https://token.actions.githubusercontent.com", "https://token.actions.githubusercontent.com", "off",
		"trusted publishing OIDC issuer; \"off\" disables")
	b.str(&cfg.OIDCAudience, "oidc-audience", "REGISTRY_OIDC_AUDIENCE", "", "OIDC audience; default the public URL")
	b.url(&cfg.GitHubAPI, "github-api", "REGISTRY_GITHUB_API", "https://api.github.com", "https://api.github.com", "", "GitHub API base for pull sync")
	b.duration(&cfg.SyncInterval, "sync-interval", "REGISTRY_SYNC_INTERVAL", 15*time.Minute, "pull sync interval; 0 disables")
	b.duration(&cfg.ScrubInterval, "scrub-interval", "REGISTRY_SCRUB_INTERVAL", 24*time.Hour, "re-hash every blob once per interval, spread evenly over it; 0 disables")
	b.hosts(&cfg.SyncDownloadHosts, "sync-download-hosts", "REGISTRY_SYNC_DOWNLOAD_HOSTS",
		"comma-separated hosts (host or host:port) sync may download release assets from; default the GitHub API host, "+strings.Join(pull.DefaultDownloadHosts, ", "))
	b.hosts(&cfg.PreviewHosts, "preview-hosts", "REGISTRY_PREVIEW_HOSTS",
		"comma-separated hosts (host or host:port) the preview images of plugins.yaml are copied from; default "+strings.Join(ingest.DefaultPreviewHosts, ", "))
	b.enum(&cfg.LogFormat, "log-format", "REGISTRY_LOG_FORMAT", "structured log format", "text", "json")
	b.int(&cfg.RateAuth, "rate-auth", "REGISTRY_RATE_AUTH", server.DefaultRateAuth, formRate, "OIDC exchanges and failed token attempts per minute per IP; 0 disables")
	b.int(&cfg.RatePublish, "rate-publish", "REGISTRY_RATE_PUBLISH", server.DefaultRatePublish, formRate, "publishes and other writes per minute per IP and per token; 0 disables")
	b.int(&cfg.RateSearch, "rate-search", "REGISTRY_RATE_SEARCH", server.DefaultRateSearch, formRate, "searches per minute per IP and per token; 0 disables")
	b.int(&cfg.RateHostBuild, "rate-host-build", "REGISTRY_RATE_HOST_BUILD", server.DefaultRateHostBuild, formRate, "host-aware index documents built (not yet cached) per minute per IP; 0 disables")
	b.int(&cfg.RateReport, "rate-report", "REGISTRY_RATE_REPORT", server.DefaultRateReport, formRate, "package reports filed (page form and API) per minute per IP; 0 disables")
	b.bool(&cfg.TrustProxy, "trust-proxy", "REGISTRY_TRUST_PROXY", "rate-limit by X-Forwarded-For from loopback/private proxies")
	b.str(&cfg.HostCaps, "host-caps", "REGISTRY_HOST_CAPS", "", "Kandev host capability table (YAML) for /kandev/{version}/{platform}/index.json; default the table in docs/host-aware.md")
	b.str(&cfg.Webhooks, "webhooks", "REGISTRY_WEBHOOKS", "", "webhooks file (YAML): endpoints, their secrets (secret_env or secret_file) and event filters; signed Standard Webhooks deliveries (docs/webhooks.md); default none")
	cfg.getenv = c.getenv
	cfg.AdminToken = strings.TrimSpace(c.getenv("REGISTRY_ADMIN_TOKEN"))
	cfg.GitHubToken = strings.TrimSpace(c.getenv("REGISTRY_GITHUB_TOKEN"))
}

// validate reports the values that did not parse, checks what depends on more than one
// setting or on the file system, and fills derived defaults; every message names the
// setting and the fix.
func (cfg *Config) validate() error {
	errs := append([]error(nil), cfg.problems...)
	// Addr parsed as host:port (a malformed one is in problems and left the default).
	if host, port, err := net.SplitHostPort(cfg.Addr); err == nil && cfg.PublicURL == "" {
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1"
		}
		cfg.PublicURL = "http://" + net.JoinHostPort(host, port)
		if port == "0" {
			cfg.urlHost = host // the port is the one the system chooses (listening)
		}
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	if cfg.OIDCAudience == "" {
		cfg.OIDCAudience = cfg.PublicURL
		cfg.audienceIsURL = true
	}
	dataErr := checkWritableDir(cfg.DataDir)
	backendsErr := cfg.backends().check(cfg.BlobsRedirect)
	errs = append(errs, dataErr, backendsErr)
	if dataErr == nil && backendsErr == nil {
		errs = append(errs, checkWritableBlobs(cfg.backends(), cfg.DataDir))
	}
	if cfg.SigstoreTrustedRoot != "" {
		if _, err := os.Stat(cfg.SigstoreTrustedRoot); err != nil {
			errs = append(errs, fmt.Errorf("--sigstore-trusted-root: %v (download trusted_root.json from the Sigstore TUF repository, or unset it)", err))
		}
	}
	if err := cfg.loadHostCaps(); err != nil {
		errs = append(errs, err)
	}
	if err := cfg.loadWebhooks(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// listening puts the port the system chose for an --addr of port 0 into the public URL
// derived from --addr, and into the OIDC audience derived from that URL: without it, every
// URL of the documents and the transparency log's name said port 0.
func (cfg *Config) listening(addr net.Addr) {
	tcp, ok := addr.(*net.TCPAddr)
	if cfg.urlHost == "" || !ok {
		return
	}
	cfg.PublicURL = "http://" + net.JoinHostPort(cfg.urlHost, strconv.Itoa(tcp.Port))
	if cfg.audienceIsURL {
		cfg.OIDCAudience = cfg.PublicURL
	}
}

// backends are the --database and --blobs of cfg.
func (cfg *Config) backends() backends { return backends{database: cfg.Database, blobs: cfg.Blobs} }

// loadHostCaps reads and checks --host-caps, naming every problem with its rule.
func (cfg *Config) loadHostCaps() error {
	if cfg.HostCaps == "" {
		return nil
	}
	data, err := os.ReadFile(cfg.HostCaps)
	if err != nil {
		return fmt.Errorf("--host-caps: %v (point it at a capability table, or unset it for the defaults)", err)
	}
	caps, probs := ingest.ParseHostCaps(data)
	if len(probs) > 0 {
		msgs := make([]string, 0, len(probs))
		for _, p := range probs {
			msgs = append(msgs, p.String())
		}
		return fmt.Errorf("--host-caps %s: %s (see docs/host-aware.md)", cfg.HostCaps, strings.Join(msgs, "; "))
	}
	cfg.hostCaps = caps
	return nil
}

// rateLimits maps the flags to the server's budgets, where 0 means off.
func (cfg *Config) rateLimits() server.RateLimits {
	off := func(v int) int {
		if v == 0 {
			return -1
		}
		return v
	}
	return server.RateLimits{Auth: off(cfg.RateAuth), Publish: off(cfg.RatePublish), Search: off(cfg.RateSearch),
		HostBuild: off(cfg.RateHostBuild), Report: off(cfg.RateReport), TrustForwarded: cfg.TrustProxy}
}

// checkWritableDir creates dir if needed and proves it is writable.
func checkWritableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("--data %s: cannot create the data directory: %v", dir, err)
	}
	f, err := os.CreateTemp(dir, ".write-test-*")
	if err != nil {
		return fmt.Errorf("--data %s: the data directory is not writable: %v (choose another with --data or fix its permissions)", dir, err)
	}
	name := f.Name()
	_ = f.Close()
	_ = os.Remove(name)
	if abs, err := filepath.Abs(dir); err == nil && abs == "/" {
		return fmt.Errorf("--data /: refusing to use the root directory")
	}
	return nil
}

// checkWritableBlobs proves that a publish can store a blob in the blob folder the flags
// name (DATA/blobs by default, or a file: --blobs), the way the store does: a file created
// in its tmp folder is renamed into the folder, then removed. A folder that only refuses
// writes would otherwise pass the start and fail every publish whose two-hex-digit
// subfolder is new with a bare 500. A bucket is not probed here.
func checkWritableBlobs(b backends, dataDir string) error {
	dir, ok := b.blobFolder(dataDir)
	if !ok {
		return nil
	}
	setting := "--data " + dataDir
	if !b.defaultBlobs(dataDir) {
		setting = "--blobs " + b.blobs
	}
	fail := func(err error) error {
		return fmt.Errorf("%s: the blob folder %s is not writable: %v (publishes store their files there: give the user the registry runs as write access to it and to its tmp folder, e.g. `chown -R USER %s` or `chmod -R u+rwX %s`, or choose another folder)",
			setting, dir, err, dir, dir)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o750); err != nil {
		return fail(err)
	}
	f, err := os.CreateTemp(tmp, ".write-test-*")
	if err != nil {
		return fail(err)
	}
	name := f.Name()
	_ = f.Close()
	moved := filepath.Join(dir, filepath.Base(name))
	if err := os.Rename(name, moved); err != nil {
		_ = os.Remove(name)
		return fail(err)
	}
	if err := os.Remove(moved); err != nil {
		return fail(err)
	}
	return nil
}

// checkHTTPURL accepts an absolute http or https URL with a host, and without a space, a
// query or a fragment: each URL set is a base other URLs are made from by appending a path
// (PUBLIC_URL/index.json), which would land in the query or the fragment.
func checkHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("not an absolute http(s) URL")
	}
	var has []string
	if strings.ContainsAny(s, " \t\r\n") {
		has = append(has, "a space")
	}
	if strings.Contains(s, "?") {
		has = append(has, "a query (?…)")
	}
	if strings.Contains(s, "#") {
		has = append(has, "a fragment (#…)")
	}
	if len(has) == 0 {
		return nil
	}
	what, them := has[len(has)-1], "it"
	if len(has) > 1 {
		what, them = strings.Join(has[:len(has)-1], ", ")+" and "+what, "them"
	}
	return valueFix("it has " + what + ", which a base URL cannot have (paths are appended to it): remove " + them +
		" (a space in a path may be percent-encoded as %20)")
}

// valueFix is a parse error that says what is wrong with a value and how to mend it;
// expected shows it after the form the value must have.
type valueFix string

func (f valueFix) Error() string { return string(f) }

// expected words why a value was refused: the form it must have and, when its parse said,
// how to mend it.
func expected(form string, err error) string {
	var fix valueFix
	if errors.As(err, &fix) {
		return "expected " + form + "; " + string(fix)
	}
	return "expected " + form
}

// binder declares typed settings on a FlagSet: each is a flag plus the environment
// variable that sets it when the flag is absent.
type binder struct {
	fs       *flag.FlagSet
	c        *cli
	problems *[]error
}

// setting is one flag.Value. Set never fails the parse: a malformed value becomes a
// problem naming the flag, its variable, the value and the expected form, and the
// setting keeps its previous value.
type setting struct {
	flag, env, form string
	text            string // the value in force, as given
	parse           func(string) error
	boolean         bool
	problems        *[]error
}

func (s *setting) String() string {
	if s == nil {
		return ""
	}
	return s.text
}

// IsBoolFlag lets `--demo` stand for `--demo=true`.
func (s *setting) IsBoolFlag() bool { return s != nil && s.boolean }

func (s *setting) Set(v string) error {
	s.apply(fmt.Sprintf("--%s %q (%s)", s.flag, v, s.env), v)
	return nil
}

func (s *setting) apply(label, v string) {
	if err := s.parse(strings.TrimSpace(v)); err != nil {
		*s.problems = append(*s.problems, fmt.Errorf("%s: %s", label, expected(s.form, err)))
		return
	}
	s.text = v
}

// declare registers s with its default text def, then applies its environment variable.
func (b *binder) declare(s *setting, def, usage string) {
	s.text, s.problems = def, b.problems
	b.fs.Var(s, s.flag, usage+" ("+s.env+")")
	if v := strings.TrimSpace(b.c.getenv(s.env)); v != "" {
		s.apply(fmt.Sprintf("%s=%q (--%s)", s.env, v, s.flag), v)
	}
}

func (b *binder) str(p *string, name, env, def, usage string) {
	*p = def
	b.declare(&setting{flag: name, env: env, form: "a value", parse: func(v string) error { *p = v; return nil }}, def, usage)
}

func (b *binder) addr(p *string, name, env, def, usage string) {
	*p = def
	b.declare(&setting{flag: name, env: env, form: "host:port such as 127.0.0.1:8080 or :8080", parse: func(v string) error {
		_, port, err := net.SplitHostPort(v)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
			return errors.New("not host:port")
		}
		*p = v
		return nil
	}}, def, usage)
}

// url declares an absolute http(s) URL; word, when set, is accepted as well (e.g. "off").
func (b *binder) url(p *string, name, env, def, example, word, usage string) {
	*p = def
	form := "an absolute http(s) URL such as " + example
	if word != "" {
		form += ", or " + word
	}
	b.declare(&setting{flag: name, env: env, form: form, parse: func(v string) error {
		if v != word {
			if err := checkHTTPURL(v); err != nil {
				return err
			}
		}
		*p = v
		return nil
	}}, def, usage)
}

func (b *binder) int(p *int, name, env string, def int, form, usage string) {
	*p = def
	b.declare(&setting{flag: name, env: env, form: form, parse: func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return errors.New("not a whole number, 0 or more")
		}
		*p = n
		return nil
	}}, strconv.Itoa(def), usage)
}

func (b *binder) int64(p *int64, name, env string, def, lowest int64, form, usage string) {
	*p = def
	b.declare(&setting{flag: name, env: env, form: form, parse: func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < lowest {
			return errors.New("out of range")
		}
		*p = n
		return nil
	}}, strconv.FormatInt(def, 10), usage)
}

// duration declares an interval of background work: 0 turns the work off, and any other
// value is at least minInterval (an interval of a nanosecond kept a CPU busy for nothing).
func (b *binder) duration(p *time.Duration, name, env string, def time.Duration, usage string) {
	*p = def
	b.declare(&setting{flag: name, env: env, form: "a duration of at least " + minIntervalText + " such as 15m, 90s or 1h30m, or 0 to turn it off", parse: func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || (d > 0 && d < minInterval) {
			return errors.New("not a duration of at least " + minIntervalText + ", or 0")
		}
		*p = d
		return nil
	}}, def.String(), usage)
}

// minAdminToken is the length under which serve warns that REGISTRY_ADMIN_TOKEN is weak:
// 32 hex digits are 128 random bits. It is a warning, not a refusal, so that a test setup
// or a local trial may use a short one.
const minAdminToken = 32

// minInterval is the shortest interval of background work (sync, scrub) a setting takes.
const (
	minInterval     = time.Minute
	minIntervalText = "1m"
)

func (b *binder) bool(p *bool, name, env, usage string) {
	*p = false
	b.declare(&setting{flag: name, env: env, form: formBool, boolean: true, parse: func(v string) error {
		switch v {
		case "true":
			*p = true
		case "false":
			*p = false
		default:
			return errors.New("not true or false")
		}
		return nil
	}}, "", usage)
}

// hosts declares a comma-separated list of host names or host:port pairs (no scheme, no path).
func (b *binder) hosts(p *[]string, name, env, usage string) {
	*p = nil
	b.declare(&setting{flag: name, env: env, form: "comma-separated host names such as objects.githubusercontent.com,mirror.example.com:8443", parse: func(v string) error {
		var out []string
		for _, h := range strings.Split(v, ",") {
			h = strings.TrimSpace(h)
			if h == "" {
				continue
			}
			if strings.ContainsAny(h, "/@?#* ") {
				return fmt.Errorf("%q is not a host name", h)
			}
			if host, port, err := net.SplitHostPort(h); err == nil {
				if n, perr := strconv.Atoi(port); host == "" || perr != nil || n < 1 || n > 65535 {
					return fmt.Errorf("%q is not host:port", h)
				}
			}
			out = append(out, strings.ToLower(h))
		}
		if len(out) == 0 {
			return errors.New("no host")
		}
		*p = out
		return nil
	}}, "", usage)
}

// enum declares a setting that takes one of choices; the first is the default.
func (b *binder) enum(p *string, name, env, usage string, choices ...string) {
	*p = choices[0]
	b.declare(&setting{flag: name, env: env, form: strings.Join(choices, " or "), parse: func(v string) error {
		for _, c := range choices {
			if v == c {
				*p = v
				return nil
			}
		}
		return errors.New("not a choice")
	}}, choices[0], usage+": "+strings.Join(choices, " or "))
}

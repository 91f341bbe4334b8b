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

	"github.com/pluginyard/registry/server"
)

// Config is everything `registry serve` is told, from flags over environment over defaults.
type Config struct {
	Addr         string
	DataDir      string
	PluginsPath  string
	PublicURL    string
	AdminToken   string // REGISTRY_ADMIN_TOKEN (environment only: flags show in ps)
	MaxBodyBytes int64
	Demo         bool
	SiteName     string

	SigstoreTrustedRoot string
	SigstoreTlog        int
	SigstoreTimestamps  int
	SigstoreSCTs        int

	OIDCIssuer   string
	OIDCAudience string

	GitHubAPI    string
	GitHubToken  string
	SyncInterval time.Duration

	LogFormat string

	// Rate limits in requests per minute per client (IP, and token where one is sent);
	// 0 turns a class off.
	RateAuth    int
	RatePublish int
	RateSearch  int
	TrustProxy  bool
}

// bindServeFlags declares serve's flags with environment-variable defaults.
func bindServeFlags(fs *flag.FlagSet, c *cli, cfg *Config) {
	fs.StringVar(&cfg.Addr, "addr", envDefault(c, "REGISTRY_ADDR", "127.0.0.1:8080"), "listen address (REGISTRY_ADDR)")
	fs.StringVar(&cfg.DataDir, "data", envDefault(c, "REGISTRY_DATA", "./data"), "data directory: SQLite file and blobs (REGISTRY_DATA)")
	fs.StringVar(&cfg.PluginsPath, "plugins", envDefault(c, "REGISTRY_PLUGINS", "./plugins.yaml"), "curated list (REGISTRY_PLUGINS)")
	fs.StringVar(&cfg.PublicURL, "public-url", envDefault(c, "REGISTRY_PUBLIC_URL", ""), "base of every absolute URL emitted; default http://<addr> (REGISTRY_PUBLIC_URL)")
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body", envInt64(c, "REGISTRY_MAX_BODY", 100<<20), "publish upload limit in bytes (REGISTRY_MAX_BODY)")
	fs.BoolVar(&cfg.Demo, "demo", envDefault(c, "REGISTRY_DEMO", "") == "true", "publish the bundled examples when the data directory is empty (REGISTRY_DEMO=true)")
	fs.StringVar(&cfg.SiteName, "site-name", envDefault(c, "REGISTRY_SITE_NAME", "Plugin Registry"), "name shown on pages and in index.json source (REGISTRY_SITE_NAME)")
	fs.StringVar(&cfg.SigstoreTrustedRoot, "sigstore-trusted-root", envDefault(c, "REGISTRY_SIGSTORE_TRUSTED_ROOT", ""), "trusted_root.json for offline Sigstore verification (REGISTRY_SIGSTORE_TRUSTED_ROOT)")
	fs.IntVar(&cfg.SigstoreTlog, "sigstore-tlog-threshold", int(envInt64(c, "REGISTRY_SIGSTORE_TLOG_THRESHOLD", 1)), "transparency log entries required")
	fs.IntVar(&cfg.SigstoreTimestamps, "sigstore-timestamp-threshold", int(envInt64(c, "REGISTRY_SIGSTORE_TIMESTAMP_THRESHOLD", 1)), "verified timestamps required")
	fs.IntVar(&cfg.SigstoreSCTs, "sigstore-sct-threshold", int(envInt64(c, "REGISTRY_SIGSTORE_SCT_THRESHOLD", 1)), "signed certificate timestamps required")
	fs.StringVar(&cfg.OIDCIssuer, "oidc-issuer", envDefault(c, "REGISTRY_OIDC_ISSUER", "https://token.actions.githubusercontent.com"), "trusted publishing OIDC issuer; \"off\" disables (REGISTRY_OIDC_ISSUER)")
	fs.StringVar(&cfg.OIDCAudience, "oidc-audience", envDefault(c, "REGISTRY_OIDC_AUDIENCE", ""), "OIDC audience; default the public URL (REGISTRY_OIDC_AUDIENCE)")
	fs.StringVar(&cfg.GitHubAPI, "github-api", envDefault(c, "REGISTRY_GITHUB_API", "https://api.github.com"), "GitHub API base for pull sync (REGISTRY_GITHUB_API)")
	fs.DurationVar(&cfg.SyncInterval, "sync-interval", envDuration(c, "REGISTRY_SYNC_INTERVAL", 15*time.Minute), "pull sync interval; 0 disables (REGISTRY_SYNC_INTERVAL)")
	fs.StringVar(&cfg.LogFormat, "log-format", envDefault(c, "REGISTRY_LOG_FORMAT", "text"), "text or json (REGISTRY_LOG_FORMAT)")
	fs.IntVar(&cfg.RateAuth, "rate-auth", int(envInt64(c, "REGISTRY_RATE_AUTH", server.DefaultRateAuth)), "OIDC exchanges and failed token attempts per minute per IP; 0 disables (REGISTRY_RATE_AUTH)")
	fs.IntVar(&cfg.RatePublish, "rate-publish", int(envInt64(c, "REGISTRY_RATE_PUBLISH", server.DefaultRatePublish)), "publishes and other writes per minute per IP and per token; 0 disables (REGISTRY_RATE_PUBLISH)")
	fs.IntVar(&cfg.RateSearch, "rate-search", int(envInt64(c, "REGISTRY_RATE_SEARCH", server.DefaultRateSearch)), "searches per minute per IP and per token; 0 disables (REGISTRY_RATE_SEARCH)")
	fs.BoolVar(&cfg.TrustProxy, "trust-proxy", envDefault(c, "REGISTRY_TRUST_PROXY", "") == "true", "rate-limit by X-Forwarded-For from loopback/private proxies (REGISTRY_TRUST_PROXY=true)")
	cfg.AdminToken = strings.TrimSpace(c.getenv("REGISTRY_ADMIN_TOKEN"))
	cfg.GitHubToken = strings.TrimSpace(c.getenv("REGISTRY_GITHUB_TOKEN"))
}

func envInt64(c *cli, key string, def int64) int64 {
	if v := strings.TrimSpace(c.getenv(key)); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	}
	return def
}

func envDuration(c *cli, key string, def time.Duration) time.Duration {
	if v := strings.TrimSpace(c.getenv(key)); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
	}
	return def
}

// validate checks the configuration and fills derived defaults; every message names the
// setting and the fix.
func (cfg *Config) validate() error {
	var errs []error
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		errs = append(errs, fmt.Errorf("--addr %q: expected host:port, e.g. 127.0.0.1:8080", cfg.Addr))
	}
	if cfg.PublicURL == "" && err == nil {
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1"
		}
		cfg.PublicURL = "http://" + net.JoinHostPort(host, port)
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	if u, err := url.Parse(cfg.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("--public-url %q: expected an absolute http(s) URL such as https://plugins.example.com", cfg.PublicURL))
	}
	if cfg.MaxBodyBytes < 1<<20 {
		errs = append(errs, fmt.Errorf("--max-body %d: must be at least 1 MiB (1048576)", cfg.MaxBodyBytes))
	}
	for _, r := range []struct {
		flag string
		v    int
	}{{"--rate-auth", cfg.RateAuth}, {"--rate-publish", cfg.RatePublish}, {"--rate-search", cfg.RateSearch}} {
		if r.v < 0 {
			errs = append(errs, fmt.Errorf("%s %d: expected requests per minute, or 0 to turn the limit off", r.flag, r.v))
		}
	}
	if cfg.OIDCAudience == "" {
		cfg.OIDCAudience = cfg.PublicURL
	}
	if cfg.LogFormat != "text" && cfg.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("--log-format %q: expected text or json", cfg.LogFormat))
	}
	if err := checkWritableDir(cfg.DataDir); err != nil {
		errs = append(errs, err)
	}
	if cfg.SigstoreTrustedRoot != "" {
		if _, err := os.Stat(cfg.SigstoreTrustedRoot); err != nil {
			errs = append(errs, fmt.Errorf("--sigstore-trusted-root: %v (download trusted_root.json from the Sigstore TUF repository, or unset it)", err))
		}
	}
	return errors.Join(errs...)
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
		TrustForwarded: cfg.TrustProxy}
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

package server

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/problem"
)

// RateLimits are per-client request budgets, in requests per minute. A client is its IP
// address (an IPv6 address counts by its /64) or, for the authenticated writes, the bearer
// token it sends. A bucket holds one minute's worth, so a burst of that many is allowed at
// once. Zero takes the default; a negative value turns the class off.
//
// Failed authentications are limited separately from valid use: a request that ends in 401
// (a bad, expired, revoked or missing token, or a refused OIDC token) gets back what it
// spent and is charged to its address's failure budget instead. So a valid token is never
// refused because others failed from the same address (a NAT, a CI runner pool); only the
// failures get 429 once that budget is spent.
type RateLimits struct {
	// Auth bounds, per IP, POST /api/v1/auth/oidc exchanges and POST /api/v1/tokens/revoke
	// reports (one budget) and, separately, failed
	// authentications; once the failure budget is spent, a failing request answers 429
	// instead of 401 until it refills. Default 30.
	Auth int
	// Publish bounds the authenticated writes: POST /api/v1/packages, yank, unyank,
	// deprecate and admin POSTs, per bearer token (per IP for requests without one).
	// Default 60.
	Publish int
	// Search bounds GET /api/v1/plugins and the home page with a q, per IP and, when a
	// bearer token is sent, also per token. Default 600.
	Search int
	// HostBuild bounds, per IP, the host-aware requests (/kandev/{host_version}/{platform}/…)
	// whose class is not built yet: each costs a build, while a built class answers without
	// spending. Default 30.
	HostBuild int
	// Report bounds, per IP, the reports anyone may file (POST /plugins/{id}/report and
	// POST /api/v1/plugins/{id}/reports), refused or not. Default 10.
	Report int
	// TrustForwarded keys clients by X-Forwarded-For when the connection comes from a
	// loopback or private address (a reverse proxy in front of the registry); otherwise
	// by the connection's address, which a client cannot forge.
	TrustForwarded bool
	// MaxClients bounds the clients tracked per class (default 100,000); idle ones are
	// forgotten first.
	MaxClients int
}

// Default budgets, generous enough for CI bursts, the demo and the test suites.
const (
	DefaultRateAuth    = 30
	DefaultRatePublish = 60
	DefaultRateSearch  = 600
	// DefaultRateHostBuild is a host-aware build per two seconds per client, with a burst
	// of 30: a host asks for one class, a mirror for a few.
	DefaultRateHostBuild = 30
	// DefaultRateReport is ten reports a minute per address: a person reports a package or
	// two, a flood from one address stops at ten.
	DefaultRateReport = 10
)

// rate classes, also the label of registry_rate_limited_total and, after "rate.", the
// rule id of a 429.
const (
	classAuth    = "auth"
	classFailed  = "auth_failures"
	classPublish = "publish"
	classSearch  = "search"
	// classHostBuild is charged by the host-aware handlers themselves (a build, not a route).
	classHostBuild = "host_build"
	classReport    = "report"
)

// rateLimiters holds one limiter per class; nil means the class is off.
type rateLimiters struct {
	auth, failed, publish, search *limiter
	hostBuild                     *limiter
	report                        *limiter
	forwarded                     echo.IPExtractor // nil: the connection's address
}

func newRateLimiters(cfg RateLimits) *rateLimiters {
	maxKeys := cfg.MaxClients
	if maxKeys <= 0 {
		maxKeys = 100_000
	}
	auth := perMinute(cfg.Auth, DefaultRateAuth)
	rl := &rateLimiters{
		auth:      newLimiter(auth, maxKeys),
		failed:    newLimiter(auth, maxKeys),
		publish:   newLimiter(perMinute(cfg.Publish, DefaultRatePublish), maxKeys),
		search:    newLimiter(perMinute(cfg.Search, DefaultRateSearch), maxKeys),
		hostBuild: newLimiter(perMinute(cfg.HostBuild, DefaultRateHostBuild), maxKeys),
		report:    newLimiter(perMinute(cfg.Report, DefaultRateReport), maxKeys),
	}
	if cfg.TrustForwarded {
		rl.forwarded = echo.ExtractIPFromXFFHeader() // trusts loopback, link-local and private proxies
	}
	return rl
}

func perMinute(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// limiter is a set of token buckets keyed by client, with bounded memory: a bucket idle
// long enough to have refilled is forgotten (losslessly), and past maxKeys the oldest go.
// A bucket counts time credit rather than fractional tokens, so waits are exact.
type limiter struct {
	every   time.Duration // the credit one request costs: a minute / requests per minute
	full    time.Duration // a full bucket: a minute's worth
	idle    time.Duration // time for an empty bucket to refill completely
	maxKeys int

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	credit time.Duration // accrued up to at, at most full
	at     time.Time     // last update, which is also the last use
}

// newLimiter returns a limiter of perMinute requests a minute, or nil when perMinute < 0.
func newLimiter(perMinute, maxKeys int) *limiter {
	if perMinute <= 0 {
		return nil
	}
	every := time.Minute / time.Duration(perMinute)
	return &limiter{every: every, full: every * time.Duration(perMinute), idle: time.Minute,
		maxKeys: maxKeys, buckets: map[string]*bucket{}}
}

// bucketFor returns key's bucket brought up to now, creating it full; it sweeps idle
// buckets now and then. l.mu is held.
func (l *limiter) bucketFor(key string, now time.Time) *bucket {
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= l.maxKeys || now.Sub(l.lastSweep) > l.idle {
			l.sweep(now)
		}
		b = &bucket{credit: l.full, at: now}
		l.buckets[key] = b
	}
	if now.After(b.at) {
		b.credit = min(l.full, b.credit+now.Sub(b.at))
		b.at = now
	}
	return b
}

// sweep forgets buckets idle long enough to be full again; if that does not free a tenth
// of the room, it forgets others at random (so that a flood of new clients costs an
// amortised constant, not a full scan per request).
func (l *limiter) sweep(now time.Time) {
	l.lastSweep = now
	for k, b := range l.buckets {
		if now.Sub(b.at) > l.idle {
			delete(l.buckets, k)
		}
	}
	target := l.maxKeys - max(1, l.maxKeys/10)
	for k := range l.buckets {
		if len(l.buckets) <= target {
			break
		}
		delete(l.buckets, k)
	}
}

// take spends one request from every key's bucket, all or none; it returns zero when
// allowed, else how long until it would be.
func (l *limiter) take(now time.Time, keys ...string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var wait time.Duration
	for _, k := range keys {
		wait = max(wait, l.every-l.bucketFor(k, now).credit)
	}
	if wait > 0 {
		return wait
	}
	for _, k := range keys {
		l.bucketFor(k, now).credit -= l.every
	}
	return 0
}

// refund gives back one request to every key's bucket, as if it had not been spent.
func (l *limiter) refund(now time.Time, keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		b := l.bucketFor(k, now)
		b.credit = min(l.full, b.credit+l.every)
	}
}

// size is the number of clients tracked.
func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// limitRates applies the rate limits by route; it sits inside logRequests so that 429s
// are logged, and outside the route's auth middleware so that it sees failed
// authentications. A request that ends in 401 is refunded and charged to its address's
// failure budget; when that is spent, the 401 becomes a 429. The client's keys are only
// worked out for a request that spends or fails: most requests (index.json, pages,
// downloads) are in no class, and their address parsed and formatted and a slice of keys
// were five allocations per request (BenchmarkIndexGzip/chain: 34 -> 29).
func (s *Server) limitRates(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		var (
			now  time.Time
			ip   string
			keys []string
		)
		class, l := s.limits.classOf(c)
		if l != nil {
			now, ip = s.now(), s.limits.clientIP(c)
			keys = classKeys(class, ip, bearerKey(c))
			if d := l.take(now, keys...); d > 0 {
				return s.tooMany(c, class, d, "too many "+class+" requests from this client")
			}
		}
		err := next(c)
		if err == nil || statusOf(err) != http.StatusUnauthorized {
			return err
		}
		if l != nil {
			l.refund(now, keys...)
		} else {
			now, ip = s.now(), s.limits.clientIP(c)
		}
		if s.limits.failed != nil {
			if d := s.limits.failed.take(now, ip); d > 0 {
				return s.tooMany(c, classFailed, d, "too many failed authentications from this address (bad, expired or missing tokens); "+
					"requests with a valid token are not affected")
			}
		}
		return err
	}
}

// classKeys names the buckets a request spends from: the authenticated writes are keyed
// by their token (by address when there is none), the other classes by address and, for
// search, also by token.
func classKeys(class, ip, tok string) []string {
	switch {
	case tok == "" || class == classAuth || class == classReport:
		return []string{ip}
	case class == classPublish:
		return []string{tok}
	}
	return []string{ip, tok}
}

// classOf names the budget a request spends from, if any. A HEAD search runs the whole
// search as its GET does, so it spends from the same budget.
func (rl *rateLimiters) classOf(c echo.Context) (string, *limiter) {
	method, route := c.Request().Method, c.Path()
	read := method == http.MethodGet || method == http.MethodHead
	switch {
	case method == http.MethodPost && (route == "/api/v1/auth/oidc" || route == "/api/v1/tokens/revoke"):
		return classAuth, rl.auth // per address only: a bearer header buys no fresh budget
	case method == http.MethodPost && (route == "/api/v1/plugins/:id/reports" || route == "/plugins/:id/report" || route == "/extensions/*"):
		return classReport, rl.report
	case method == http.MethodPost && strings.HasPrefix(route, "/api/v1/"):
		return classPublish, rl.publish
	case read && route == "/api/v1/plugins":
		return classSearch, rl.search
	case read && route == "/" && c.QueryParam("q") != "":
		return classSearch, rl.search
	}
	return "", nil
}

// clientIP keys a client by address: the connection's unless forwarded headers are
// trusted; an IPv6 address by its /64, which one host usually controls whole.
func (rl *rateLimiters) clientIP(c echo.Context) string {
	var host string
	if rl.forwarded != nil {
		host = rl.forwarded(c.Request())
	} else if h, _, err := net.SplitHostPort(c.Request().RemoteAddr); err == nil {
		host = h
	} else {
		host = c.Request().RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return "ip:" + host
	}
	if ip.To4() == nil {
		return "ip:" + ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return "ip:" + ip.String()
}

// bearerKey is a digest of the request's bearer token ("" when none): buckets never hold
// a secret.
func bearerKey(c echo.Context) string {
	secret, ok := bearerToken(c.Request().Header.Get(echo.HeaderAuthorization))
	if !ok {
		return ""
	}
	sum := sha256.Sum256([]byte(secret))
	return "tok:" + hex.EncodeToString(sum[:12])
}

// tooMany answers 429 with Retry-After (whole seconds, at least 1) in the API's error
// shape, with one problem whose rule is "rate." and the class (rate.auth_failures, ...).
func (s *Server) tooMany(c echo.Context, class string, wait time.Duration, why string) error {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	s.metrics.rateLimited.WithLabelValues(class).Inc()
	msg := why + ": retry in " + strconv.Itoa(secs) + " s"
	return &ingest.Refusal{Kind: echo.NewHTTPError(http.StatusTooManyRequests, msg), Message: msg,
		Problems: problem.List{{Rule: "rate." + class, Severity: problem.Error, Message: msg}}}
}

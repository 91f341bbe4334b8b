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
	"golang.org/x/time/rate"
)

// RateLimits are per-client request budgets, in requests per minute. A client is its IP
// address (an IPv6 address counts by its /64) and, where a bearer token is sent, also the
// token: a request must fit both budgets. A bucket holds one minute's worth, so a burst of
// that many is allowed at once. Zero takes the default; a negative value turns the class off.
type RateLimits struct {
	// Auth bounds POST /api/v1/auth/oidc and failed bearer-token attempts, per IP; once
	// spent, requests carrying a bearer token get 429 until it refills. Default 30.
	Auth int
	// Publish bounds the authenticated writes: POST /api/v1/packages, yank, unyank,
	// deprecate and admin POSTs. Default 60.
	Publish int
	// Search bounds GET /api/v1/plugins and the home page with a q. Default 600.
	Search int
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
)

// rate classes, also the label of registry_rate_limited_total.
const (
	classAuth    = "auth"
	classPublish = "publish"
	classSearch  = "search"
)

// rateLimiters holds one limiter per class; nil means the class is off.
type rateLimiters struct {
	auth, publish, search *limiter
	forwarded             echo.IPExtractor // nil: the connection's address
}

func newRateLimiters(cfg RateLimits) *rateLimiters {
	maxKeys := cfg.MaxClients
	if maxKeys <= 0 {
		maxKeys = 100_000
	}
	rl := &rateLimiters{
		auth:    newLimiter(perMinute(cfg.Auth, DefaultRateAuth), maxKeys),
		publish: newLimiter(perMinute(cfg.Publish, DefaultRatePublish), maxKeys),
		search:  newLimiter(perMinute(cfg.Search, DefaultRateSearch), maxKeys),
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
type limiter struct {
	limit   rate.Limit
	burst   int
	idle    time.Duration // time for an empty bucket to refill completely
	maxKeys int

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// newLimiter returns a limiter of perMinute requests a minute, or nil when perMinute < 0.
func newLimiter(perMinute, maxKeys int) *limiter {
	if perMinute <= 0 {
		return nil
	}
	return &limiter{limit: rate.Limit(float64(perMinute) / 60), burst: perMinute, idle: time.Minute,
		maxKeys: maxKeys, buckets: map[string]*bucket{}}
}

// bucketFor returns key's bucket, creating it; it sweeps idle buckets now and then.
func (l *limiter) bucketFor(key string, now time.Time) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= l.maxKeys || now.Sub(l.lastSweep) > l.idle {
			l.sweep(now)
		}
		b = &bucket{lim: rate.NewLimiter(l.limit, l.burst)}
		l.buckets[key] = b
	}
	b.seen = now
	return b.lim
}

// sweep forgets buckets idle long enough to be full again; if that does not free a tenth
// of the room, it forgets others at random (so that a flood of new clients costs an
// amortised constant, not a full scan per request).
func (l *limiter) sweep(now time.Time) {
	l.lastSweep = now
	for k, b := range l.buckets {
		if now.Sub(b.seen) > l.idle {
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
	var (
		wait time.Duration
		done []*rate.Reservation
	)
	for _, k := range keys {
		r := l.bucketFor(k, now).ReserveN(now, 1)
		done = append(done, r)
		wait = max(wait, r.DelayFrom(now))
	}
	if wait > 0 {
		for _, r := range done {
			r.CancelAt(now)
		}
	}
	return wait
}

// blocked reports how long until key's bucket holds a whole request, without spending it.
func (l *limiter) blocked(now time.Time, key string) time.Duration {
	tokens := l.bucketFor(key, now).TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / float64(l.limit) * float64(time.Second))
}

// size is the number of clients tracked.
func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// limitRates applies the rate limits by route; it sits inside logRequests so that 429s
// are logged, and outside the route's auth middleware so that it sees failed tokens.
func (s *Server) limitRates(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		now := s.now()
		ip, tok := s.limits.clientIP(c), bearerKey(c)
		if tok != "" && s.limits.auth != nil {
			if d := s.limits.auth.blocked(now, ip); d > 0 {
				return s.tooMany(c, classAuth, d, "too many failed token attempts from this address")
			}
		}
		class, l := s.limits.classOf(c)
		if l != nil {
			keys := []string{ip}
			if tok != "" && class != classAuth {
				keys = append(keys, tok)
			}
			if d := l.take(now, keys...); d > 0 {
				return s.tooMany(c, class, d, "too many "+class+" requests")
			}
		}
		err := next(c)
		if tok != "" && class != classAuth && s.limits.auth != nil && statusOf(err) == http.StatusUnauthorized {
			s.limits.auth.take(now, ip)
		}
		return err
	}
}

// classOf names the budget a request spends from, if any.
func (rl *rateLimiters) classOf(c echo.Context) (string, *limiter) {
	method, route := c.Request().Method, c.Path()
	switch {
	case method == http.MethodPost && route == "/api/v1/auth/oidc":
		return classAuth, rl.auth
	case method == http.MethodPost && strings.HasPrefix(route, "/api/v1/"):
		return classPublish, rl.publish
	case method == http.MethodGet && route == "/api/v1/plugins":
		return classSearch, rl.search
	case method == http.MethodGet && route == "/" && c.QueryParam("q") != "":
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
	secret, ok := strings.CutPrefix(c.Request().Header.Get(echo.HeaderAuthorization), "Bearer ")
	if !ok || strings.TrimSpace(secret) == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(secret)))
	return "tok:" + hex.EncodeToString(sum[:12])
}

// tooMany answers 429 with Retry-After (whole seconds, at least 1) in the API's error shape.
func (s *Server) tooMany(c echo.Context, class string, wait time.Duration, why string) error {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	s.metrics.rateLimited.WithLabelValues(class).Inc()
	return errf(http.StatusTooManyRequests, why+": retry in "+strconv.Itoa(secs)+" s")
}

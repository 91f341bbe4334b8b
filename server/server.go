// Package server is the HTTP face of the registry: echo wiring, routes, handlers, auth,
// middleware and the mapping of errors to statuses. Business rules live in ingest.
package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/translog"
)

// Config is what the HTTP layer needs to know.
type Config struct {
	PublicURL    string
	AdminSecret  string // REGISTRY_ADMIN_TOKEN, when set
	SiteName     string
	MaxBodyBytes int64 // publish uploads (default 100 MiB)
	// OIDC, when set, enables GitHub Actions trusted publishing at POST /api/v1/auth/oidc.
	OIDC OIDCExchanger
	// Reload re-reads plugins.yaml (POST /api/v1/admin/reload); nil disables the route.
	Reload func(ctx context.Context, actor string, force bool) error
	// Ready reports readiness details for /readyz beyond the database and index.
	ReadyDetail func() map[string]string
	// Sync, when set, is the background pull sync shown at GET /api/v1/admin/sync.
	Sync SyncStatus
	// Webhooks, when set, is the webhooks configuration shown with the delivery log at GET
	// /api/v1/admin/webhooks/deliveries (never its secrets).
	Webhooks *ingest.WebhookConfig
	// Metrics is served at /metrics; nil makes a fresh one (then publishes and index
	// builds are only counted if it is also the ingest.Config.Observer, so pass both).
	Metrics *Metrics
	// RateLimits are the per-client budgets for auth, publish and search.
	RateLimits RateLimits
	// ReadHeaderTimeout bounds how long a client may take to send its request headers
	// (default 10 s): a slow-loris client is cut off.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds how long a client may take to send a whole request, headers and
	// body (default 30 s): a body dripped a byte at a time is cut off. Publish uploads get
	// UploadTimeout instead.
	ReadTimeout time.Duration
	// UploadTimeout bounds reading and answering one publish upload (default: the time
	// MaxBodyBytes takes at 128 KiB/s, at least 10 minutes), so that large packages on slow
	// links still arrive while a dripped upload is still cut off.
	UploadTimeout time.Duration
	// Log is the transparency log served at /log/; nil opens the store's, with the key in
	// its data directory.
	Log *translog.Log
	// LogOutput, when set, is where the logger passed to New writes: the request lines
	// queued while Serve runs then leave in one write per batch (requestlog.go).
	LogOutput *LogOutput
}

// OIDCExchanger trades a CI provider's identity token for a short-lived upload token.
type OIDCExchanger interface {
	Exchange(ctx context.Context, rawToken string) (token string, expires time.Time, scope []string, err error)
}

// Server serves the registry.
type Server struct {
	e   *echo.Echo
	svc *ingest.Service
	md  Metadata // every read of the metadata store (metadata.go)
	cfg Config
	log *slog.Logger
	now func() time.Time

	reqlog *requestLog // the request lines (logRequests), batched while Serve runs
	fast   fastRoutes  // the document routes answered before echo's router (index_fast.go)
	// laneServed counts the requests Serve's lane answered (lane.go).
	laneServed atomic.Int64
	laneHook   func() // tests: runs before each request the lane answers
	// docHeaders are the header values of the documents served (serveDoc).
	docHeaders docHeaderCache

	metrics *Metrics
	limits  *rateLimiters
	tlog    *translog.Log // nil when its key could not be loaded
}

// New builds a Server with every route registered. Writes and in-memory reads go through
// svc; md answers the handlers' reads of the metadata store (*store.Store in the embedded
// default, the one svc was built over).
func New(cfg Config, svc *ingest.Service, md Metadata, log *slog.Logger) *Server {
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 100 << 20
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	if cfg.ReadHeaderTimeout == 0 {
		cfg.ReadHeaderTimeout = 10 * time.Second
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = 30 * time.Second
	}
	if cfg.UploadTimeout == 0 {
		cfg.UploadTimeout = uploadTimeoutFor(cfg.MaxBodyBytes)
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	s := &Server{e: e, svc: svc, md: md, cfg: cfg, log: log, now: time.Now, metrics: cfg.Metrics, limits: newRateLimiters(cfg.RateLimits),
		reqlog: newRequestLog(log.Handler(), cfg.LogOutput)}
	e.HTTPErrorHandler = s.handleError
	s.openLog()
	s.routes()
	return s
}

// minUploadRate is the slowest link a publish upload of MaxBodyBytes is allowed for.
const minUploadRate = 128 << 10 // bytes per second

// uploadTimeoutFor is the default UploadTimeout for a body limit of maxBody bytes.
func uploadTimeoutFor(maxBody int64) time.Duration {
	return max(10*time.Minute, time.Duration(maxBody/minUploadRate)*time.Second)
}

// ServeHTTP makes the Server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.serveFast(w, r) {
		s.e.ServeHTTP(w, r)
	}
}

// Serve serves on ln until ctx ends, then shuts down gracefully (in-flight requests get
// up to 20 seconds). While it runs, request lines are written in batches (requestLog);
// all of them are written before it returns.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	defer s.reqlog.start()()
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout, // the publish handler extends it for its upload
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ConnContext:       withConn, // lets serveDoc send a document in one writev (heldconn.go)
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	lane := newLane(ln, hs, s, s.isFast, &s.laneServed, s.laneHook, s.log)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(lane) }()
	var err error // hs.Serve's, never nil, when it returned before ctx ended
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	if err == nil {
		err = hs.Shutdown(grace)
		if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
			err = serr
		}
	}
	// http.Server.Serve closes its listener, the lane, whenever it returns: the lane
	// accepts nothing more, and wait waits for the answers it has begun.
	if werr := lane.wait(grace); err == nil {
		err = werr
	}
	return err
}

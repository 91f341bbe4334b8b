package server

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is the registry's own Prometheus registry (never the global one) and its
// collectors. It implements ingest.Observer: pass it as ingest.Config.Observer and as
// Config.Metrics so that publishes and index builds are counted too.
type Metrics struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	publishes    *prometheus.CounterVec
	publishRules *prometheus.CounterVec
	indexBuilds  *prometheus.CounterVec
	indexTime    prometheus.Histogram
	indexBytes   prometheus.Gauge
	indexEntries prometheus.Gauge
	downloads    *prometheus.CounterVec
	rateLimited  *prometheus.CounterVec

	observers sync.Map // requestKey -> *requestObserver
}

// NewMetrics returns a fresh registry with the registry's metrics and the Go and process
// collectors.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "registry_http_requests_total",
			Help: "HTTP requests by route template, method and status."}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "registry_http_request_duration_seconds",
			Help: "HTTP request duration by route template.", Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10)}, []string{"route"}),
		publishes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "registry_publishes_total",
			Help: "Publishes by outcome (created, repeated, invalid, forbidden, conflict, too_large, error)."}, []string{"outcome"}),
		publishRules: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "registry_publish_refusals_by_rule_total",
			Help: "Refused publishes by outcome and the rule id of each error problem."}, []string{"outcome", "rule"}),
		indexBuilds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "registry_index_builds_total",
			Help: "Index rebuilds by result (ok, error)."}, []string{"result"}),
		indexTime: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "registry_index_build_duration_seconds",
			Help: "Index rebuild duration.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 9)}),
		indexBytes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "registry_index_size_bytes",
			Help: "Size of the index.json in force, uncompressed."}),
		indexEntries: prometheus.NewGauge(prometheus.GaugeOpts{Name: "registry_index_entries",
			Help: "Entries of the index.json in force."}),
		downloads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "registry_downloads_total",
			Help: "Package downloads (whole-file GETs) by kind (plugin, canvas, extension)."}, []string{"kind"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "registry_rate_limited_total",
			Help: "Requests answered 429 by rate-limit class (auth, publish, search)."}, []string{"class"}),
	}
	m.reg.MustRegister(m.requests, m.duration, m.publishes, m.publishRules, m.indexBuilds, m.indexTime,
		m.indexBytes, m.indexEntries, m.downloads, m.rateLimited,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry returns the Prometheus registry, to gather from in tests or add collectors to.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// PublishDone counts one publish by outcome, and a refusal by each of its rule ids.
func (m *Metrics) PublishDone(outcome string, rules []string) {
	m.publishes.WithLabelValues(outcome).Inc()
	for _, r := range rules {
		m.publishRules.WithLabelValues(outcome, r).Inc()
	}
}

// IndexBuilt records one index rebuild: its duration and, when it was swapped in, the
// document's size and entry count.
func (m *Metrics) IndexBuilt(took time.Duration, bytes, entries int, err error) {
	m.indexTime.Observe(took.Seconds())
	if err != nil {
		m.indexBuilds.WithLabelValues("error").Inc()
		return
	}
	m.indexBuilds.WithLabelValues("ok").Inc()
	m.indexBytes.Set(float64(bytes))
	m.indexEntries.Set(float64(entries))
}

// handleMetrics is GET /metrics: the Prometheus text exposition.
func (s *Server) handleMetrics(c echo.Context) error {
	promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}).ServeHTTP(c.Response(), c.Request())
	return nil
}

// observeRequests counts every request by route template (never the raw path, so the
// label set stays bounded) and status, times it, and counts package downloads by kind. It
// sits outside recoverPanics so that it sees the final status of every request.
func (s *Server) observeRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		if err := next(c); err != nil {
			c.Error(err)
		}
		route, status := c.Path(), c.Response().Status
		o := s.metrics.observerFor(route, methodLabel(c.Request().Method), status)
		o.count.Inc()
		o.duration.Observe(time.Since(start).Seconds())
		if route == "/packages/:id/:file" && c.Request().Method == http.MethodGet && status == http.StatusOK {
			s.countDownload(pathParam(c, "id"))
		}
		return nil
	}
}

// requestKey is one label set of the request metrics; every part is bounded (a route
// template, methodLabel, a status code).
type requestKey struct {
	route, method string
	status        int
}

// requestObserver is the counter and histogram of one requestKey.
type requestObserver struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// observerFor returns the collectors of route, method and status, looked up once per label
// set: WithLabelValues hashes and compares every label value, and formats the status, on
// every call.
func (m *Metrics) observerFor(route, method string, status int) *requestObserver {
	k := requestKey{route, method, status}
	if o, ok := m.observers.Load(k); ok {
		return o.(*requestObserver)
	}
	o := &requestObserver{count: m.requests.WithLabelValues(route, method, strconv.Itoa(status)),
		duration: m.duration.WithLabelValues(route)}
	actual, _ := m.observers.LoadOrStore(k, o)
	return actual.(*requestObserver)
}

func (s *Server) countDownload(fileID string) {
	cat := s.svc.Catalog()
	kind := "unlisted"
	if id, ok := cat.PackageIDForFile(fileID); ok {
		if it, ok := cat.Item(id); ok {
			kind = it.Kind
		}
	}
	s.metrics.downloads.WithLabelValues(kind).Inc()
}

// methodLabel keeps the method label bounded: clients may send any token as a method.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return "OTHER"
}

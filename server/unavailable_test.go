package server_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
	"github.com/pluginyard/registry/verify"
)

// dbProxy forwards TCP connections to a PostgreSQL server; cut closes every connection
// and stops accepting (the database is out of reach), restore listens again on the same
// address.
type dbProxy struct {
	t      *testing.T
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func newDBProxy(t *testing.T, target string) *dbProxy {
	p := &dbProxy{t: t, target: target, addr: "127.0.0.1:0"}
	p.restore()
	p.addr = p.ln.Addr().String()
	t.Cleanup(p.cut)
	return p
}

func (p *dbProxy) restore() {
	p.t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the old listener's port may take a moment to be free again
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go p.accept(ln)
}

func (p *dbProxy) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
		go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
	}
}

func (p *dbProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// replicaReady is what the tests read of /readyz.
type replicaReady struct {
	Ready   bool              `json:"ready"`
	Status  string            `json:"status"`
	Checks  map[string]string `json:"checks"`
	Replica *struct {
		Applied   int64  `json:"applied_serial"`
		FeedError string `json:"feed_error"`
	} `json:"replica"`
}

func TestDatabaseOutageServesReadsRefusesWritesAndRecovers(t *testing.T) {
	pg, err := url.Parse(storetest.CreateDatabase(t, storetest.SharedPostgres(t)))
	if err != nil {
		t.Fatal(err)
	}
	proxy := newDBProxy(t, pg.Host)
	pg.Host = proxy.addr
	e := startReplicaEnv(t, pg.String())

	for _, v := range []string{"0.9.0", "1.0.0"} {
		if r := e.publish(adminToken, "acme-hello-"+v+".tar.gz", pkg(t, "acme-hello", v, "Says hello")); r.Status != http.StatusCreated {
			t.Fatalf("publish %s with the database up: %d %s", v, r.Status, r.Body)
		}
	}
	before := e.get("/index.json")
	inForce := e.get("/packages/acme-hello/acme-hello-1.0.0.tar.gz")

	proxy.cut()
	r := e.publish(adminToken, "acme-hello-1.1.0.tar.gz", pkg(t, "acme-hello", "1.1.0", "Says hello"))
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != strconv.Itoa(server.RetryAfterUnavailable) {
		t.Fatalf("publish with the database out of reach: %d Retry-After %q %s; want 503 with Retry-After %d",
			r.Status, r.Header.Get("Retry-After"), r.Body, server.RetryAfterUnavailable)
	}
	during := e.get("/index.json")
	if during.Status != http.StatusOK || !bytes.Equal(during.Body, before.Body) || during.Header.Get("ETag") != before.Header.Get("ETag") {
		t.Fatalf("index.json with the database out of reach: %d ETag %s, want 200 with the documents in force (ETag %s)",
			during.Status, during.Header.Get("ETag"), before.Header.Get("ETag"))
	}
	for _, p := range []string{"/curupira/index.json", "/api/v1/plugins", "/"} { // from the catalog in memory
		if r := e.get(p); r.Status != http.StatusOK {
			t.Errorf("GET %s with the database out of reach: %d, want 200 from memory", p, r.Status)
		}
	}
	// The release index.json lists installs from memory; an older one needs its row.
	if r := e.get("/packages/acme-hello/acme-hello-1.0.0.tar.gz"); r.Status != http.StatusOK || !bytes.Equal(r.Body, inForce.Body) {
		t.Errorf("GET the listed release's package with the database out of reach: %d, %d bytes; want 200 with its %d bytes", r.Status, len(r.Body), len(inForce.Body))
	}
	for _, p := range []string{"/plugins/acme-hello", "/packages/acme-hello/acme-hello-0.9.0.tar.gz"} { // rows read per request
		if r := e.get(p); r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
			t.Errorf("GET %s with the database out of reach: %d Retry-After %q, want 503 with Retry-After", p, r.Status, r.Header.Get("Retry-After"))
		}
	}
	e.svc.FollowOnce(context.Background()) // the follower meets the outage
	ready := e.get("/readyz")
	var rb replicaReady
	ready.json(t, &rb)
	if ready.Status != http.StatusOK || !rb.Ready || rb.Status != "degraded" || rb.Replica == nil || rb.Replica.FeedError == "" {
		t.Fatalf("/readyz with the database out of reach: %d %s; want 200, ready, degraded, the feed error named", ready.Status, ready.Body)
	}

	proxy.restore()
	if !e.svc.FollowOnce(context.Background()) {
		t.Fatal("the follower does not read the feed once the database is back")
	}
	if r := e.publish(adminToken, "acme-hello-1.1.0.tar.gz", pkg(t, "acme-hello", "1.1.0", "Says hello")); r.Status != http.StatusCreated {
		t.Fatalf("publish once the database is back: %d %s", r.Status, r.Body)
	}
	var idx struct {
		Plugins []struct{ ID, Version string } `json:"plugins"`
	}
	e.get("/index.json").json(t, &idx)
	if len(idx.Plugins) != 1 || idx.Plugins[0].Version != "1.1.0" {
		t.Fatalf("index.json after recovery lists %+v, want acme-hello 1.1.0", idx.Plugins)
	}
	e.get("/readyz").json(t, &rb)
	if rb.Status != "ok" || rb.Checks["database"] != "ok" || rb.Checks["change_feed"] != "ok" {
		t.Fatalf("/readyz after recovery: %+v", rb)
	}
}

// startReplicaEnv starts a registry replica on the PostgreSQL database of dsn.
func startReplicaEnv(t *testing.T, dsn string) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	l, probs := index.ParseList([]byte(testList))
	if probs.HasErrors() {
		t.Fatalf("list: %v", probs)
	}
	st, err := store.OpenURL(ctx, dsn, filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e := &env{t: t, dir: dir, st: st}
	e.srv = httptest.NewUnstartedServer(nil)
	publicURL := "http://" + e.srv.Listener.Addr().String()
	cfg := ingest.Config{PublicURL: publicURL, Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits()}
	e.svc = ingest.New(st, l, cfg, log)
	t.Cleanup(e.svc.Close)
	if err := e.svc.EnableReplica(ingest.ReplicaOptions{Name: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	e.srv.Config.Handler = server.New(server.Config{PublicURL: publicURL, AdminSecret: adminToken, MaxBodyBytes: 2 << 20}, e.svc, st, log)
	e.srv.Start()
	t.Cleanup(e.close)
	return e
}

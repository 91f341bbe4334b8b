package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
)

// The lane answers the plainest requests for the documents hosts poll without net/http's
// per-request machinery. For every request net/http starts a goroutine to watch the
// connection (its background read), makes a cancelable context, moves the read deadline
// three times, parses with a reader general enough for any request and sorts the response's
// fields; for a 60 KB gzip answer on two cores that costs more than the answer itself. At
// 1,000 plugins a minimal net/http handler of the same bytes reached 0.56–0.71× nginx's
// gzip_static, a loop that reads the head and writes the answer 0.75–0.94×, the registry
// 0.63× before the lane and 0.73–0.87× with it (bench/README.md, session 8).
//
// laneListener reads the first request of every TCP connection itself. A request it can
// answer — GET or HEAD, HTTP/1.1, of a fast route's exact path (index_fast.go), with no
// field but those of laneFields, each well formed and each at most once — goes to the
// Server's own ServeHTTP with a laneWriter: the same middleware, headers, request line,
// metrics and rate limits as through net/http (TestLaneMatchesNetHTTP), the answer sent in
// one writev. At the first request it cannot answer, the connection goes to net/http with
// every byte read so far, and stays there: net/http reads and judges that request as if it
// had read it itself, whatever it is (a malformed head gets net/http's 400, a body is read
// as a body). Nothing the lane accepts is ambiguous: no body, no Transfer-Encoding, no
// obs-fold, no bare LF, no control or non-ASCII byte, one Host.

// laneHeadMax is the longest request head the lane reads: a host's poll is about 150 bytes;
// a longer head goes to net/http (whose limit is MaxHeaderBytes).
const laneHeadMax = 4 << 10

// laneFields are the request fields a lane request may carry (lower case), each at most
// once; any other field sends the request to net/http.
var laneFields = [...]string{"host", "user-agent", "accept", "accept-encoding", "connection",
	"if-none-match", "if-modified-since"}

// laneKeys are laneFields' canonical keys (http.CanonicalHeaderKey).
var laneKeys = func() (keys [len(laneFields)]string) {
	for i, f := range laneFields {
		keys[i] = http.CanonicalHeaderKey(f)
	}
	return keys
}()

// laneListener is the listener http.Server serves: it accepts from inner, serves lane
// requests, and hands net/http (Accept) the connections it does not answer.
type laneListener struct {
	inner   net.Listener
	handler http.Handler
	fast    func(path []byte) bool // whether path is a fast route's exact path
	log     *slog.Logger

	idle, head, write time.Duration // http.Server's IdleTimeout, ReadHeaderTimeout, WriteTimeout

	handoff chan net.Conn
	done    chan struct{} // closed by Close, or when inner's Accept fails for good
	err     error         // why done closed (net.ErrClosed after Close)
	once    sync.Once

	mu      sync.Mutex
	closing atomic.Bool        // set by Close under mu; answers in flight read it (Connection: close)
	conns   map[*heldConn]bool // the lane's connections: true while one answers a request
	wg      sync.WaitGroup     // the lane's connection goroutines

	served *atomic.Int64 // requests the lane took (Server.laneServed)
	hook   func()        // tests: runs before each request the lane answers
}

// newLane serves on inner: handler answers the lane's requests, fast names their paths,
// the timeouts are hs's, served counts the requests taken, and hook (tests; nil otherwise)
// runs before each.
func newLane(inner net.Listener, hs *http.Server, handler http.Handler, fast func([]byte) bool, served *atomic.Int64, hook func(), log *slog.Logger) *laneListener {
	head := hs.ReadHeaderTimeout
	if head <= 0 {
		head = hs.ReadTimeout
	}
	idle := hs.IdleTimeout
	if idle <= 0 {
		idle = hs.ReadTimeout
	}
	l := &laneListener{inner: inner, handler: handler, fast: fast, served: served, hook: hook, log: log,
		idle: idle, head: head, write: hs.WriteTimeout,
		handoff: make(chan net.Conn), done: make(chan struct{}), conns: map[*heldConn]bool{}}
	go l.acceptLoop()
	return l
}

// Accept returns the next connection for net/http.
func (l *laneListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.handoff:
		return c, nil
	case <-l.done:
		return nil, l.err
	}
}

func (l *laneListener) Addr() net.Addr { return l.inner.Addr() }

// Close stops accepting and closes the lane's connections that are not answering a
// request; the others close when their answer is sent. wait waits for them.
func (l *laneListener) Close() error {
	err := l.inner.Close()
	l.stop(net.ErrClosed)
	l.mu.Lock()
	l.closing.Store(true)
	for c, busy := range l.conns {
		if !busy {
			_ = c.Close()
		}
	}
	l.mu.Unlock()
	return err
}

func (l *laneListener) stop(err error) {
	l.once.Do(func() {
		l.err = err
		close(l.done)
	})
}

// wait waits until every lane connection has ended, or ctx ends (then it closes them).
func (l *laneListener) wait(ctx context.Context) error {
	ended := make(chan struct{})
	go func() { l.wg.Wait(); close(ended) }()
	select {
	case <-ended:
		return nil
	case <-ctx.Done():
		l.mu.Lock()
		for c := range l.conns {
			_ = c.Close()
		}
		l.mu.Unlock()
		<-ended
		return ctx.Err()
	}
}

// acceptLoop accepts until inner fails for good, backing off on temporary errors (too many
// open files) as http.Server does.
func (l *laneListener) acceptLoop() {
	var delay time.Duration
	for {
		c, err := l.inner.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Temporary() { //nolint:staticcheck // what http.Server checks
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				l.log.Warn("accept failed; retrying", "err", err, "in", delay)
				select {
				case <-time.After(delay):
					continue
				case <-l.done:
					return
				}
			}
			l.stop(err)
			return
		}
		delay = 0
		tc, ok := c.(*net.TCPConn)
		if !ok {
			l.give(c)
			continue
		}
		hc, err := newHeldConn(tc)
		if err != nil {
			_ = c.Close()
			continue
		}
		l.mu.Lock()
		if l.closing.Load() {
			l.mu.Unlock()
			_ = c.Close()
			continue
		}
		l.conns[hc] = false
		l.wg.Add(1)
		l.mu.Unlock()
		go l.serve(hc)
	}
}

// give hands c to net/http, or closes it when the listener has closed.
func (l *laneListener) give(c net.Conn) {
	select {
	case l.handoff <- c:
	case <-l.done:
		_ = c.Close()
	}
}

// serve answers c's lane requests; at the first it cannot answer, c goes to net/http
// with what was read of it.
func (l *laneListener) serve(c *heldConn) {
	defer l.wg.Done()
	handed := false
	defer func() {
		if p := recover(); p != nil && p != http.ErrAbortHandler { //nolint:errorlint // a sentinel panic value, as net/http compares it
			l.log.Error("lane: panic serving a request", "panic", p, "remote", c.RemoteAddr().String())
		}
		l.mu.Lock()
		delete(l.conns, c)
		l.mu.Unlock()
		if handed {
			l.give(c)
		} else {
			_ = c.Close()
		}
	}()
	remote := c.RemoteAddr().String()
	buf := make([]byte, laneHeadMax)
	n := 0 // bytes in buf
	w := &laneWriter{c: c, l: l, h: http.Header{}}
	for first := true; ; first = false {
		end, open := l.readHead(c, buf, &n, first)
		if !open {
			return
		}
		var req *http.Request
		ok := false
		if end >= 0 {
			req, ok = l.request(buf[:end], remote)
		}
		if !ok { // not a request the lane reads: net/http reads it, and the rest
			c.pre, handed = append([]byte(nil), buf[:n]...), true
			return
		}
		if !l.setBusy(c, true) {
			return
		}
		if l.write > 0 {
			_ = c.SetWriteDeadline(time.Now().Add(l.write))
		}
		w.reset(req.Method == http.MethodHead)
		l.served.Add(1) // before any of the answer leaves: a client that has it sees it counted
		if l.hook != nil {
			l.hook()
		}
		l.handler.ServeHTTP(w, req)
		keep := w.finish()
		n = copy(buf, buf[end:n])
		if !l.setBusy(c, false) || !keep {
			return
		}
	}
}

// setBusy marks c as answering a request (or not), and reports false when the listener is
// closing: c is then to be closed.
func (l *laneListener) setBusy(c *heldConn, busy bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing.Load() {
		return false
	}
	l.conns[c] = busy
	return true
}

// readHead reads into buf (holding *n bytes already) until it holds a whole head, and
// returns the head's length, or -1 when net/http is to read what is held (a head longer
// than laneHeadMax, or a LF without its CR before the head's end); false when the
// connection is to close (the client closed it, timed out, or it failed). As with
// net/http, a connection's first head must come within the header timeout of its accept,
// and a later one within the idle timeout for its first byte, then the header timeout.
// (A head handed over gets net/http's own header timeout on top: at most twice it.)
func (l *laneListener) readHead(c *heldConn, buf []byte, n *int, first bool) (int, bool) {
	var start time.Time
	if first {
		start = time.Now()
		if l.head > 0 {
			_ = c.SetReadDeadline(start.Add(l.head))
		}
	}
	for {
		// A LF without its CR inside a whole head fails request's parse (in a value, a
		// name or the request line); before the head's end it would never end it.
		i := bytes.Index(buf[:*n], crlfcrlf)
		switch {
		case i >= 0:
			return i + 4, true
		case *n == len(buf) || bareLF(buf[:*n]):
			return -1, true
		}
		if *n == 0 && start.IsZero() {
			if l.idle > 0 {
				_ = c.SetReadDeadline(time.Now().Add(l.idle))
			}
		} else if start.IsZero() {
			start = time.Now()
			if l.head > 0 {
				_ = c.SetReadDeadline(start.Add(l.head))
			}
		}
		k, err := c.rawRead(buf[*n:])
		*n += k
		if err != nil {
			return -1, false
		}
	}
}

var crlfcrlf = []byte("\r\n\r\n")

// bareLF reports whether b has a LF that does not follow a CR.
func bareLF(b []byte) bool {
	for i := bytes.IndexByte(b, '\n'); i >= 0; {
		if i == 0 || b[i-1] != '\r' {
			return true
		}
		j := bytes.IndexByte(b[i+1:], '\n')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// request parses head (ending in CRLF CRLF) as a lane request, or reports false.
func (l *laneListener) request(head []byte, remote string) (*http.Request, bool) {
	line, rest, _ := bytes.Cut(head, crlf)
	var method string
	switch {
	case bytes.HasPrefix(line, []byte("GET ")):
		method, line = http.MethodGet, line[4:]
	case bytes.HasPrefix(line, []byte("HEAD ")):
		method, line = http.MethodHead, line[5:]
	default:
		return nil, false
	}
	target, proto, ok := bytes.Cut(line, []byte(" "))
	if !ok || string(proto) != "HTTP/1.1" || !l.fast(target) {
		return nil, false
	}
	h := make(http.Header, 4)
	var host string
	var seen [len(laneFields)]bool
	for len(rest) > 2 {
		var field []byte
		field, rest, _ = bytes.Cut(rest, crlf)
		name, value, ok := bytes.Cut(field, []byte(":"))
		if !ok {
			return nil, false
		}
		k := laneField(name)
		if k < 0 || seen[k] {
			return nil, false
		}
		seen[k] = true
		value = bytes.Trim(value, " \t")
		if !fieldValue(value) {
			return nil, false
		}
		switch laneFields[k] {
		case "host": // as net/http: the Host field is Request.Host, not in Header
			if !hostValue(value) {
				return nil, false
			}
			host = string(value)
			continue
		case "connection":
			if !bytes.EqualFold(value, []byte("keep-alive")) {
				return nil, false
			}
		}
		h[laneKeys[k]] = []string{string(value)}
	}
	if !seen[0] { // HTTP/1.1 requires Host (net/http answers 400)
		return nil, false
	}
	p := string(target)
	// No context: Request.Context is then context.Background (a lane answer is not
	// cancelled by its client going away; it is written from memory at once).
	return &http.Request{Method: method, URL: &url.URL{Path: p}, RequestURI: p,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h, Host: host,
		Body: http.NoBody, RemoteAddr: remote}, true
}

var crlf = []byte("\r\n")

// laneField is the index of name in laneFields (ASCII case-insensitively), or -1; a name
// with anything but letters and '-' is none of them.
func laneField(name []byte) int {
	for i, f := range laneFields {
		if bytes.EqualFold(name, []byte(f)) {
			return i
		}
	}
	return -1
}

// fieldValue reports whether v has only visible ASCII, spaces and tabs.
func fieldValue(v []byte) bool {
	for _, b := range v {
		if (b < 0x20 && b != '\t') || b >= 0x7f {
			return false
		}
	}
	return true
}

// hostValue reports whether v is a non-empty host[:port] of the characters a DNS name, an
// IPv4 or a bracketed IPv6 address uses.
func hostValue(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	for _, b := range v {
		switch {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		case b == '.', b == '-', b == ':', b == '[', b == ']', b == '_':
		default:
			return false
		}
	}
	return true
}

// laneWriter is the http.ResponseWriter of a lane request, as net/http's would be: the
// fields are those the handler set when it called WriteHeader (or first wrote); no body
// for a HEAD, a 204 or a 304; never more body than the Content-Length it set
// (http.ErrContentLength); a Content-Length and a sniffed Content-Type when the handler set
// none; a Date. What the handler writes is kept (up to laneBodyMax) and sent with the head
// when it returns (finish), or with the parts writeWhole gives it, in one writev. A body of
// unknown length that does not fit ends with the connection (Connection: close), where
// net/http would chunk it: no lane handler sends one.
type laneWriter struct {
	c *heldConn
	l *laneListener
	h http.Header

	status   int
	head     bool   // a HEAD request: no body is sent
	fields   []byte // the status line and the handler's fields, made at WriteHeader
	declared int64  // the handler's Content-Length; -1 for none (an invalid one is dropped)
	typed    bool   // the handler set a Content-Type or a Content-Encoding: no sniffing
	body     []byte // written by the handler and not sent yet
	written  int64  // body bytes the handler wrote (a HEAD's included, as net/http counts them)
	sent     int64  // body bytes sent
	began    bool   // the head has been sent
	failed   bool   // a write failed
	close    bool   // the connection closes after this answer
}

// laneBodyMax is the most body bytes a laneWriter keeps before it sends its head; laneKeep
// the largest buffer a connection keeps for its next answer.
const (
	laneBodyMax = 64 << 10
	laneKeep    = 8 << 10
)

func (w *laneWriter) reset(head bool) {
	clear(w.h)
	w.status, w.head, w.fields, w.declared, w.typed = 0, head, w.fields[:0], -1, false
	w.body, w.written, w.sent, w.began, w.failed, w.close = w.body[:0], 0, 0, false, false, false
}

func (w *laneWriter) Header() http.Header { return w.h }

// WriteHeader fixes the status and the fields (later changes to Header have no effect, as
// with net/http). Informational codes are not sent on the lane.
func (w *laneWriter) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code)) // as net/http
	}
	if w.status != 0 || code < 200 {
		return
	}
	w.status = code
	b := append(w.fields[:0], "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, ' ')
	if text := http.StatusText(code); text != "" {
		b = append(b, text...)
	} else {
		b = append(b, "status code "...)
		b = strconv.AppendInt(b, int64(code), 10)
	}
	b = append(b, "\r\n"...)
	for k, vs := range w.h {
		if !httpguts.ValidHeaderFieldName(k) {
			continue
		}
		switch k {
		case "Content-Length":
			v, err := strconv.ParseInt(strings.TrimSpace(firstOf(vs)), 10, 64)
			if len(vs) != 1 || err != nil || v < 0 || !bodyAllowed(code) {
				continue // dropped, as net/http does (and for a 204 or 304)
			}
			w.declared = v
		case "Transfer-Encoding":
			continue // the lane never chunks
		case "Content-Type":
			if code == http.StatusNotModified {
				continue
			}
			w.typed = true
		case "Content-Encoding":
			w.typed = w.typed || firstOf(vs) != ""
		case "Connection":
			w.close = w.close || httpguts.HeaderValuesContainsToken(vs, "close")
		}
		for _, v := range vs {
			b = append(b, k...)
			b = append(b, ": "...)
			for i := 0; i < len(v); i++ { // as net/http: a CR or LF in a value becomes a space
				if c := v[i]; c == '\r' || c == '\n' {
					b = append(b, ' ')
				} else {
					b = append(b, c)
				}
			}
			b = append(b, "\r\n"...)
		}
	}
	w.fields = b
}

func firstOf(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// accept counts n more body bytes the handler writes, and reports whether they are to be
// sent: not for a HEAD; an error for a status without a body, or past the Content-Length.
func (w *laneWriter) accept(n int64) (bool, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !bodyAllowed(w.status) {
		return false, http.ErrBodyNotAllowed
	}
	if w.declared >= 0 && w.written+n > w.declared {
		return false, http.ErrContentLength
	}
	if w.failed {
		return false, errLaneWrite
	}
	w.written += n
	return !w.head, nil
}

func (w *laneWriter) Write(p []byte) (int, error) {
	send, err := w.accept(int64(len(p)))
	if !send {
		if err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if !w.began && len(w.body)+len(p) <= laneBodyMax {
		w.body = append(w.body, p...)
		return len(p), nil
	}
	if err := w.send(p, nil); err != nil {
		return 0, err
	}
	return len(p), nil
}

var errLaneWrite = errors.New("lane: the connection failed")

// sendParts sends parts, the rest of the body (writeWhole), as one Write of them all.
func (w *laneWriter) sendParts(parts [][]byte) (int64, error) {
	var n int64
	for _, p := range parts {
		n += int64(len(p))
	}
	send, err := w.accept(n)
	if !send {
		if err != nil {
			return 0, err
		}
		return n, nil
	}
	if err := w.send(nil, parts); err != nil {
		return 0, err
	}
	return n, nil
}

// send writes the head (the first time), the kept body, first and parts.
func (w *laneWriter) send(first []byte, parts [][]byte) error {
	if !w.began {
		w.c.held = w.endHead(w.c.held[:0], false)
	}
	w.c.held = append(w.c.held, w.body...)
	w.sent += int64(len(w.body))
	w.body = w.body[:0]
	n, err := w.c.writeHeldAnd(first, parts)
	w.sent += n
	if err != nil {
		w.failed = true
	}
	return err
}

// endHead appends the head to b: the fields WriteHeader made, then those net/http adds: a
// Date, a Content-Length for the whole body once the handler is done (for a HEAD, the
// bytes it wrote, if any), a sniffed Content-Type, Connection: close when the connection
// ends with this answer.
func (w *laneWriter) endHead(b []byte, done bool) []byte {
	w.began = true
	b = append(b, w.fields...)
	if _, ok := w.h["Date"]; !ok {
		b = append(b, "Date: "...)
		b = append(b, httpDate()...)
		b = append(b, "\r\n"...)
	}
	if bodyAllowed(w.status) && w.declared < 0 {
		switch {
		case done && (!w.head || w.written > 0):
			b = append(b, "Content-Length: "...)
			b = strconv.AppendInt(b, w.written, 10)
			b = append(b, "\r\n"...)
		case !w.head:
			w.close = true // a body of unknown length ends with the connection
		}
	}
	if bodyAllowed(w.status) && !w.typed && len(w.body) > 0 {
		b = append(b, "Content-Type: "...)
		b = append(b, http.DetectContentType(w.body)...)
		b = append(b, "\r\n"...)
	}
	if w.l != nil && w.l.closing.Load() {
		w.close = true // as net/http: no keep-alive while shutting down
	}
	if w.close {
		b = append(b, "Connection: close\r\n"...)
	}
	return append(b, "\r\n"...)
}

// finish sends what is left of the answer once the handler has returned, and reports
// whether the connection may serve another request: not when a write failed, when the
// answer ends with the connection, or when the body sent is not the length announced.
func (w *laneWriter) finish() bool {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !w.began {
		w.c.held = append(w.endHead(w.c.held[:0], true), w.body...)
		w.sent, w.body = int64(len(w.body)), w.body[:0]
		if _, err := w.c.writeHeldAnd(nil, nil); err != nil {
			w.failed = true
		}
	} else if len(w.body) > 0 {
		_ = w.send(nil, nil)
	}
	if cap(w.body) > laneKeep {
		w.body = nil // no idle connection keeps a large answer's buffers
	}
	if cap(w.c.held) > laneKeep {
		w.c.held = nil
	}
	if w.failed || w.close {
		return false
	}
	return w.head || !bodyAllowed(w.status) || w.declared < 0 || w.sent == w.declared
}

// bodyAllowed reports whether an answer of this status has a body (RFC 9110 §6.4.1).
func bodyAllowed(status int) bool {
	return status != http.StatusNoContent && status != http.StatusNotModified && status >= 200
}

// dateCache is the Date field's value, formatted once a second.
var dateCache atomic.Pointer[dateValue]

type dateValue struct {
	sec int64
	s   string
}

func httpDate() string {
	now := time.Now()
	if d := dateCache.Load(); d != nil && d.sec == now.Unix() {
		return d.s
	}
	d := &dateValue{sec: now.Unix(), s: now.UTC().Format(http.TimeFormat)}
	dateCache.Store(d)
	return d.s
}

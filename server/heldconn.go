package server

import (
	"context"
	"io"
	"net"
	"net/http"
)

// A document from memory leaves in one writev(2): status line, fields and body together,
// as nginx's tcp_nopush and sendfile send a static file. Through net/http alone it would
// take two writes (its 4 KiB buffer's worth, then the rest), and corking the socket around
// them two setsockopt(2) more: four syscalls per response where one does (bench/load and
// bench/scale's gzip phases measure the difference).
//
// heldListener wraps each accepted TCP connection in a *heldConn. serveDoc holds the
// connection's writes (holdWrites) while net/http writes the response head, then hands it
// the body as a *heldBody through net/http's ReadFrom, which reaches heldConn.ReadFrom:
// the held head and the body go out in one writev. Outside a hold, and for any reader but
// a *heldBody, heldConn behaves as the *net.TCPConn it wraps (sendfile included).

// heldMax bounds the bytes a hold keeps: net/http writes a response head of at most its
// 4 KiB buffer (plus the 512 bytes it copies before ReadFrom); past heldMax a hold writes
// what it has at once rather than growing.
const heldMax = 16 << 10

// heldListener wraps the *net.TCPConn connections a listener accepts in *heldConn.
type heldListener struct{ net.Listener }

func (l heldListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		return &heldConn{TCPConn: tc}, nil
	}
	return c, err
}

// heldConn is a TCP connection whose writes a handler can hold (writeWhole). The requests
// of one connection are served one after another, so a hold is never shared by two.
type heldConn struct {
	*net.TCPConn
	holding bool
	held    []byte // written while holding (a copy: net/http reuses its buffer)
	sends   int    // write and writev calls made, for tests
}

// Write keeps p while holding (within heldMax), else writes what is held and p.
func (c *heldConn) Write(p []byte) (int, error) {
	if c.holding && len(c.held)+len(p) <= heldMax {
		c.held = append(c.held, p...)
		return len(p), nil
	}
	return c.writeHeldAnd(p)
}

// ReadFrom sends what is held and the rest of a *heldBody in one writev; any other reader
// goes to the TCP connection's ReadFrom (sendfile for a file) after what is held.
func (c *heldConn) ReadFrom(r io.Reader) (int64, error) {
	if b, ok := r.(*heldBody); ok {
		n, err := c.writeHeldAnd(b.b[b.off:])
		b.off += n
		return int64(n), err
	}
	if _, err := c.writeHeldAnd(nil); err != nil {
		return 0, err
	}
	c.sends++ // one at least (sendfile, splice or a copy)
	return c.TCPConn.ReadFrom(r)
}

// writeHeldAnd writes what is held and then p in one writev, and returns how much of p
// was written.
func (c *heldConn) writeHeldAnd(p []byte) (int, error) {
	if len(c.held) == 0 {
		if len(p) == 0 {
			return 0, nil
		}
		c.sends++
		return c.TCPConn.Write(p)
	}
	c.sends++
	held := len(c.held)
	bufs := net.Buffers{c.held, p}
	n, err := bufs.WriteTo(c.TCPConn)
	c.held = c.held[:0]
	return int(max(n-int64(held), 0)), err
}

// release ends a hold and writes what it kept. A write that fails closes the connection:
// net/http counted the held bytes as written, and would otherwise answer the next request
// on a connection whose response was cut short.
func (c *heldConn) release() {
	c.holding = false
	if _, err := c.writeHeldAnd(nil); err != nil {
		_ = c.TCPConn.Close()
	}
}

// heldBody is a body from memory for heldConn.ReadFrom. It has no WriteTo, so that io.Copy
// and net/http hand it to ReadFrom instead of writing it themselves.
type heldBody struct {
	b   []byte
	off int
}

func (b *heldBody) Read(p []byte) (int, error) {
	if b.off >= len(b.b) {
		return 0, io.EOF
	}
	n := copy(p, b.b[b.off:])
	b.off += n
	return n, nil
}

// connKey is the request-context key of the request's *heldConn (withConn).
type connKey struct{}

// withConn is http.Server.ConnContext: it keeps a *heldConn in its requests' context, so
// that serveDoc can hold its writes.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if hc, ok := c.(*heldConn); ok {
		return context.WithValue(ctx, connKey{}, hc)
	}
	return ctx
}

// writeWhole writes body, the whole of a 200 response whose head w has not sent yet, with
// the head in one writev when the request's connection is a *heldConn and w reaches
// net/http's ReadFrom; otherwise with one Write. It returns the body bytes written.
func writeWhole(r *http.Request, w http.ResponseWriter, body []byte) (int64, error) {
	hc, _ := r.Context().Value(connKey{}).(*heldConn)
	rf, ok := w.(io.ReaderFrom)
	if hc == nil || !ok {
		n, err := w.Write(body)
		return int64(n), err
	}
	hc.holding = true
	defer hc.release()
	return rf.ReadFrom(&heldBody{b: body})
}

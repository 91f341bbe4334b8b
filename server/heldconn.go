package server

import (
	"context"
	"io"
	"net"
	"net/http"

	"github.com/pluginyard/registry/index"
)

// A document from memory leaves in one writev(2) (one per 1024 parts, the kernel's IOV_MAX,
// for a document of many entries): status line, fields and body together, as nginx's
// tcp_nopush and sendfile send a static file. Through net/http alone it would
// take two writes (its 4 KiB buffer's worth, then the rest), and corking the socket around
// them two setsockopt(2) more: four syscalls per response where one does (bench/load and
// bench/scale's gzip phases measure the difference).
//
// heldListener wraps each accepted TCP connection in a *heldConn. serveDoc holds the
// connection's writes (holdWrites) while net/http writes the response head, then hands it
// the body as a *heldBody through net/http's ReadFrom, which reaches heldConn.ReadFrom:
// the held head and the body's parts (index.Body: the document's head, each entry's kept
// bytes, its end) go out in one writev, no part copied. Outside a hold, and for any reader but
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
	held    []byte      // written while holding (a copy: net/http reuses its buffer)
	bufs    net.Buffers // the writev list, reused; cleared after each write (it holds no document)
	sends   int         // write and writev calls made, for tests
}

// Write keeps p while holding (within heldMax), else writes what is held and p.
func (c *heldConn) Write(p []byte) (int, error) {
	if c.holding && len(c.held)+len(p) <= heldMax {
		c.held = append(c.held, p...)
		return len(p), nil
	}
	n, err := c.writeHeldAnd(p)
	return int(n), err
}

// ReadFrom sends what is held and the rest of a *heldBody in one writev; any other reader
// goes to the TCP connection's ReadFrom (sendfile for a file) after what is held.
func (c *heldConn) ReadFrom(r io.Reader) (int64, error) {
	if b, ok := r.(*heldBody); ok {
		return c.writeHeldAnd(b.rest()...) // the body is not read again (net/http's copy is over)
	}
	if _, err := c.writeHeldAnd(); err != nil {
		return 0, err
	}
	c.sends++ // one at least (sendfile, splice or a copy)
	return c.TCPConn.ReadFrom(r)
}

// writeHeldAnd writes what is held and then parts in one writev, and returns how much of
// parts was written.
func (c *heldConn) writeHeldAnd(parts ...[]byte) (int64, error) {
	held := len(c.held)
	switch {
	case held == 0 && len(parts) == 0:
		return 0, nil
	case held == 0 && len(parts) == 1:
		c.sends++
		n, err := c.TCPConn.Write(parts[0])
		return int64(n), err
	}
	c.sends++
	bufs := c.bufs[:0]
	if held > 0 {
		bufs = append(bufs, c.held)
	}
	bufs = append(bufs, parts...)
	all := bufs
	n, err := bufs.WriteTo(c.TCPConn) // consumes bufs (its copy of the parts), never the parts
	clear(all)                        // keep no document's bytes alive through the connection
	c.bufs, c.held = all[:0], c.held[:0]
	return max(n-int64(held), 0), err
}

// release ends a hold and writes what it kept. A write that fails closes the connection:
// net/http counted the held bytes as written, and would otherwise answer the next request
// on a connection whose response was cut short.
func (c *heldConn) release() {
	c.holding = false
	if _, err := c.writeHeldAnd(); err != nil {
		_ = c.TCPConn.Close()
	}
}

// heldBody is a body from memory, as its parts, for heldConn.ReadFrom. It has no WriteTo,
// so that io.Copy and net/http hand it to ReadFrom instead of writing it themselves.
type heldBody struct {
	parts [][]byte // what is left: parts[0][off:], then the others
	off   int
	rest0 [][]byte // rest's list when off > 0, reused
}

func (b *heldBody) Read(p []byte) (int, error) {
	if len(b.parts) == 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && len(b.parts) > 0 {
		k := copy(p[n:], b.parts[0][b.off:])
		n += k
		b.skip(int64(k))
	}
	return n, nil
}

// rest is what is left to send, as parts (the first cut where a Read left off).
func (b *heldBody) rest() [][]byte {
	if b.off == 0 || len(b.parts) == 0 {
		return b.parts
	}
	b.rest0 = append(append(b.rest0[:0], b.parts[0][b.off:]), b.parts[1:]...)
	return b.rest0
}

// skip marks n more bytes as sent.
func (b *heldBody) skip(n int64) {
	for n > 0 && len(b.parts) > 0 {
		left := int64(len(b.parts[0]) - b.off)
		if n < left {
			b.off += int(n)
			return
		}
		n -= left
		b.parts, b.off = b.parts[1:], 0
	}
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
// net/http's ReadFrom; otherwise through w's ReadFrom (net/http's copy: writes of up to
// 32 KiB, not one per part) or, without one, a Write per part. It returns the body bytes
// written.
func writeWhole(r *http.Request, w http.ResponseWriter, body index.Body) (int64, error) {
	rf, ok := w.(io.ReaderFrom)
	if !ok {
		return body.WriteTo(w)
	}
	if hc, _ := r.Context().Value(connKey{}).(*heldConn); hc != nil {
		hc.holding = true
		defer hc.release()
	}
	return rf.ReadFrom(&heldBody{parts: body.Parts()})
}

package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"syscall"

	"github.com/pluginyard/registry/index"
)

// A document from memory leaves in one writev(2) (one per 1024 parts, the kernel's IOV_MAX,
// for a document of many entries): status line, fields and body together, as nginx's
// tcp_nopush and sendfile send a static file. Through net/http alone it would
// take two writes (its 4 KiB buffer's worth, then the rest), and corking the socket around
// them two setsockopt(2) more: four syscalls per response where one does (bench/load and
// bench/scale's gzip phases measure the difference).
//
// Serve's listener (the lane, lane.go) wraps each TCP connection in a *heldConn, and hands
// net/http those it does not answer itself. For a document net/http answers, serveDoc holds the
// connection's writes (writeWhole) while net/http writes the response head, then hands it
// the body as a *heldBody through net/http's ReadFrom, which reaches heldConn.ReadFrom:
// the held head and the body's parts (index.Body: the document's head, each entry's kept
// bytes, its end) go out in one writev, no part copied. Outside a hold, and for any reader but
// a *heldBody, heldConn behaves as the *net.TCPConn it wraps (sendfile included).

// heldMax bounds the bytes a hold keeps: net/http writes a response head of at most its
// 4 KiB buffer (plus the 512 bytes it copies before ReadFrom); past heldMax a hold writes
// what it has at once rather than growing.
const heldMax = 16 << 10

// heldConn is a TCP connection whose writes a handler can hold (writeWhole). The requests
// of one connection are served one after another, so a hold is never shared by two.
type heldConn struct {
	*net.TCPConn
	holding bool
	held    []byte          // written while holding (a copy: net/http reuses its buffer)
	bufs    net.Buffers     // the writev list, reused; cleared after each write (it holds no document)
	sends   int             // write and writev calls made, for tests
	pre     []byte          // read before net/http had the connection (lane.go): its first bytes
	raw     syscall.RawConn // the socket, for the lane's raw reads and writev (rawio_linux.go)
	iov     []rawIovec      // rawWritev's list, reused; cleared after each write
}

// newHeldConn wraps tc.
func newHeldConn(tc *net.TCPConn) (*heldConn, error) {
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &heldConn{TCPConn: tc, raw: raw}, nil
}

// Read returns what the lane read before handing the connection over, then what comes.
func (c *heldConn) Read(p []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(p, c.pre)
		if c.pre = c.pre[n:]; len(c.pre) == 0 {
			c.pre = nil
		}
		return n, nil
	}
	return c.TCPConn.Read(p)
}

// Write keeps p while holding (within heldMax), else writes what is held and p.
func (c *heldConn) Write(p []byte) (int, error) {
	if c.holding && len(c.held)+len(p) <= heldMax {
		c.held = append(c.held, p...)
		return len(p), nil
	}
	n, err := c.writeHeldAnd(p, nil)
	return int(n), err
}

// ReadFrom sends what is held and the rest of a *heldBody in one writev; any other reader
// goes to the TCP connection's ReadFrom (sendfile for a file) after what is held.
func (c *heldConn) ReadFrom(r io.Reader) (int64, error) {
	if b, ok := r.(*heldBody); ok {
		return c.writeHeldAnd(b.cut()) // the body is not read again (net/http's copy is over)
	}
	if _, err := c.writeHeldAnd(nil, nil); err != nil {
		return 0, err
	}
	c.sends++ // one at least (sendfile, splice or a copy)
	return c.TCPConn.ReadFrom(r)
}

// iovMax is the most parts a writev takes (Linux's IOV_MAX; net.Buffers splits a longer list
// the same way). The writev list is filled a window of iovMax at a time, so that the one a
// connection keeps for reuse stays at iovMax slice headers (24 KiB) whatever the documents
// it served: a list of all the parts of a document of 50,000 entries would be 1.2 MB, kept
// by every idle connection that once served it.
const iovMax = 1024

// writeHeldAnd writes what is held, then first, then the parts of rest, in one writev
// per iovMax parts, and returns how much of first and rest was written.
func (c *heldConn) writeHeldAnd(first []byte, rest [][]byte) (int64, error) {
	held := len(c.held)
	if held == 0 && len(rest) == 0 {
		if len(first) == 0 {
			return 0, nil
		}
		c.sends++
		n, err := c.TCPConn.Write(first)
		return int64(n), err
	}
	c.sends++
	if want := min(2+len(rest), iovMax); cap(c.bufs) < want {
		c.bufs = make(net.Buffers, 0, want) // exactly: append would round past iovMax
	}
	bufs := append(c.bufs[:0], c.held, first) // Writev skips an empty part
	var n int64
	for {
		k := min(len(rest), iovMax-len(bufs))
		bufs, rest = append(bufs, rest[:k]...), rest[k:]
		all := bufs
		m, err := c.rawWritev(bufs)
		clear(all) // keep no document's bytes alive through the connection
		n, bufs = n+m, all[:0]
		if err != nil || len(rest) == 0 {
			c.bufs, c.held = bufs, c.held[:0]
			return max(n-int64(held), 0), err
		}
	}
}

// release ends a hold and writes what it kept. A write that fails closes the connection:
// net/http counted the held bytes as written, and would otherwise answer the next request
// on a connection whose response was cut short.
func (c *heldConn) release() {
	c.holding = false
	if _, err := c.writeHeldAnd(nil, nil); err != nil {
		_ = c.TCPConn.Close()
	}
}

// heldBody is a body from memory, as its parts, for heldConn.ReadFrom. It has no WriteTo,
// so that io.Copy and net/http hand it to ReadFrom instead of writing it themselves.
type heldBody struct {
	parts [][]byte // what is left: parts[0][off:], then the others
	off   int
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

// cut is what is left to send: the rest of the first part (where a Read left off), then
// the other parts.
func (b *heldBody) cut() ([]byte, [][]byte) {
	if len(b.parts) == 0 {
		return nil, nil
	}
	return b.parts[0][b.off:], b.parts[1:]
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
// net/http's ReadFrom; otherwise a Write per part (one for a gzip body: net/http then sends
// it straight from the slice, where its ReadFrom would copy it through a new 32 KiB buffer
// on a connection it does not know).
func writeWhole(r *http.Request, w http.ResponseWriter, body index.Body) (int64, error) {
	if lw, ok := w.(*laneWriter); ok {
		return lw.sendParts(body.Parts())
	}
	rf, ok := w.(io.ReaderFrom)
	if hc, _ := r.Context().Value(connKey{}).(*heldConn); !ok || hc == nil {
		return body.WriteTo(w)
	}
	return readFromHeld(r, rf, &heldBody{parts: body.Parts()})
}

// readFromHeld hands b to rf, the ReadFrom of r's response, with r's connection held (when
// it is a *heldConn) until it returns: what is left of b leaves with the head in one writev.
func readFromHeld(r *http.Request, rf io.ReaderFrom, b *heldBody) (int64, error) {
	if hc, _ := r.Context().Value(connKey{}).(*heldConn); hc != nil {
		hc.holding = true
		defer hc.release()
	}
	return rf.ReadFrom(b)
}

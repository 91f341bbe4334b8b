package server

import (
	"context"
	"net"
	"net/http"
	"syscall"
)

// connKey is the request-context key of the request's connection (withConn).
type connKey struct{}

// connState is what withConn keeps of a connection for its requests: the connection, and
// for a TCP connection its raw form with the cork and uncork calls made once, so that a
// request corks and uncorks it without a closure or a RawConn of its own.
type connState struct {
	conn     net.Conn
	raw      syscall.RawConn // nil: not a TCP connection, never corked
	cork     func(fd uintptr)
	uncork   func(fd uintptr)
	corkErr  error
	uncorked func() // the uncork corkConn returns
}

// withConn is http.Server.ConnContext: it keeps each connection in its requests' context,
// so that a handler can cork it (corkConn).
func withConn(ctx context.Context, c net.Conn) context.Context {
	cs := &connState{conn: c}
	if tc, ok := c.(*net.TCPConn); ok {
		if raw, err := tc.SyscallConn(); err == nil {
			cs.raw = raw
			cs.cork = func(fd uintptr) { cs.corkErr = setCorkFD(fd, true) }
			cs.uncork = func(fd uintptr) { _ = setCorkFD(fd, false) }
			cs.uncorked = func() { _ = raw.Control(cs.uncork) }
		}
	}
	return context.WithValue(ctx, connKey{}, cs)
}

// corkConn corks the request's TCP connection (TCP_CORK on Linux: partial segments are
// held) and returns the function that uncorks it, which sends what was held. Without a
// TCP connection in the context, or off Linux, both do nothing. The requests of one
// connection run one after another, so its state is never shared by two at once.
func corkConn(r *http.Request) (uncork func()) {
	cs, ok := r.Context().Value(connKey{}).(*connState)
	if !ok || cs.raw == nil {
		return noUncork
	}
	cs.corkErr = nil
	if err := cs.raw.Control(cs.cork); err != nil || cs.corkErr != nil {
		return noUncork
	}
	return cs.uncorked
}

func noUncork() {}

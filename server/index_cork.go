package server

import (
	"context"
	"net"
	"net/http"
)

// connKey is the request-context key of the request's connection (withConn).
type connKey struct{}

// withConn is http.Server.ConnContext: it keeps each connection in its requests' context,
// so that a handler can cork it (corkConn).
func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// corkConn corks the request's TCP connection (TCP_CORK on Linux: partial segments are
// held) and returns the function that uncorks it, which sends what was held. Without a
// TCP connection in the context, or off Linux, both do nothing.
func corkConn(r *http.Request) (uncork func()) {
	tc, ok := r.Context().Value(connKey{}).(*net.TCPConn)
	if !ok {
		return func() {}
	}
	raw, err := tc.SyscallConn()
	if err != nil || setCork(raw, true) != nil {
		return func() {}
	}
	return func() { _ = setCork(raw, false) }
}

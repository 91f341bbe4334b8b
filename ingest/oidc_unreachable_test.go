package ingest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
)

// closedIssuer is an issuer URL on a loopback port nothing listens on.
func closedIssuer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return "http://" + addr
}

// TestUnreachableIssuer: a token that is not a JWT is refused (unauthenticated: 401)
// before discovery, whatever the issuer's state; a well-formed one against an unreachable
// issuer is ErrUnavailable (503), not an internal error.
func TestUnreachableIssuer(t *testing.T) {
	st := mustStore(t)
	tp := NewTrustedPublishing(context.Background(), st, testList, closedIssuer(t), testAudience, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, garbage := range []string{"garbage", "a.b.c", "e30.e30.", "x.y", "e30.!!!.c2ln"} {
		_, _, _, err := tp.Exchange(context.Background(), garbage)
		if !errors.Is(err, ErrUnauthenticated) || errors.Is(err, ErrUnavailable) {
			t.Errorf("Exchange(%q): %v, want unauthenticated before discovery", garbage, err)
		}
	}
	// {"alg":"RS256"}.{"sub":"x"}.sig: well formed, so discovery is needed, and fails.
	_, _, _, err := tp.Exchange(context.Background(), "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln")
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("Exchange(well-formed) against a closed port: %v, want ErrUnavailable", err)
	}
}

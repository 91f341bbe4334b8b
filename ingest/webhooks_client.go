package ingest

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// ErrWebhookDestination refuses a connection to a loopback, private or link-local
// address for an endpoint without allow_private (rule webhooks.destination).
var ErrWebhookDestination = errors.New("webhooks.destination")

// client is the bounded HTTP client of endpoints with (allowPrivate) or without the
// address guard. The guard runs at connect time on the address actually dialled, after
// DNS, so a public name that resolves (or is re-pointed) to an internal address is
// refused too. No proxy from the environment (the guard would see the proxy's address),
// no redirects (a receiver cannot send the signed event elsewhere), and a timeout on every
// step.
func (w *Webhooks) client(allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	if !allowPrivate {
		d.Control = guardDestination
	}
	t := &http.Transport{
		Proxy:                  nil,
		DialContext:            d.DialContext,
		TLSHandshakeTimeout:    5 * time.Second,
		ResponseHeaderTimeout:  w.cfg.Timeout,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 16 << 10,
	}
	return &http.Client{Transport: t, CheckRedirect: noRedirects}
}

func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// guardDestination refuses to connect to an address that is not public.
func guardDestination(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot judge the address %q", ErrWebhookDestination, address)
	}
	if !publicAddr(ap.Addr()) {
		return fmt.Errorf("%w: %s is a loopback, private or link-local address (%s); set allow_private: true on the endpoint if the receiver is on your own network",
			ErrWebhookDestination, ap.Addr(), network)
	}
	return nil
}

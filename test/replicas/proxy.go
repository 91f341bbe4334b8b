package replicas

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// Proxy is a loopback TCP proxy in front of a server (the S3 endpoint), which a test makes
// unreachable: Cut closes every connection and refuses new ones (accepted and closed at
// once, as a crashed or partitioned server looks to a client), CutAfter does so once a
// number of bytes more went upstream (in the middle of an upload), Restore lets
// connections through again.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	down   bool
	budget int64 // bytes upstream until the cut; < 0: no cut armed
	conns  map[net.Conn]struct{}
}

// StartProxy listens on a free loopback port and forwards to target.
func StartProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("replicas: proxy: %w", err)
	}
	p := &Proxy{ln: ln, target: target, budget: -1, conns: map[net.Conn]struct{}{}}
	go p.serve()
	return p, nil
}

// Addr is host:port of the proxy.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops the proxy and every connection through it.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.Cut()
	return err
}

// Cut makes the target unreachable now.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutLocked()
}

// CutAfter makes the target unreachable once n more bytes went upstream.
func (p *Proxy) CutAfter(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.budget = n
}

// Restore makes the target reachable again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down, p.budget = false, -1
}

// Down says whether the target is cut off (by Cut or an expired CutAfter).
func (p *Proxy) Down() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.down
}

func (p *Proxy) cutLocked() {
	p.down, p.budget = true, -1
	for c := range p.conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		go p.handle(c)
	}
}

// handle forwards one connection, unless the target is cut off.
func (p *Proxy) handle(client net.Conn) {
	if p.Down() {
		_ = client.Close()
		return
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	if !p.track(client, server) {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(server, &countingReader{r: client, p: p}); done <- struct{}{} }()
	go func() { _, _ = io.Copy(client, server); done <- struct{}{} }()
	<-done
	p.untrack(client, server)
}

// track registers both ends, or closes them when a cut happened meanwhile.
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

// spend counts n bytes sent upstream against an armed budget; at zero the target is cut
// off. It reports whether the bytes may still go through.
func (p *Proxy) spend(n int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return false
	}
	if p.budget < 0 {
		return true
	}
	p.budget -= int64(n)
	if p.budget <= 0 {
		p.cutLocked()
		return false
	}
	return true
}

// countingReader is the client side of a connection, read through the budget.
type countingReader struct {
	r io.Reader
	p *Proxy
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	if n > 0 && !c.p.spend(n) {
		return 0, net.ErrClosed
	}
	return n, err
}

package s3blob_test

import (
	"bytes"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// proxy forwards TCP connections to a backend. It calls trip once, when more than limit
// bytes have gone from clients to the backend; with reset412 it turns every 412 answer
// into a reset connection instead.
type proxy struct {
	addr     string
	reset412 bool
	sent     atomic.Int64
	tripped  atomic.Bool
	resets   atomic.Int64
}

func startProxy(t *testing.T, backend string, limit int64, trip func()) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: l.Addr().String()}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		_ = l.Close()
		wg.Wait()
	})
	var once sync.Once
	counted := func(n int64) {
		if p.sent.Add(n) > limit && trip != nil {
			once.Do(func() {
				p.tripped.Store(true)
				trip()
			})
		}
	}
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { p.serve(c, backend, counted) })
		}
	})
	return p
}

func (p *proxy) serve(c net.Conn, backend string, counted func(int64)) {
	defer c.Close()
	b, err := net.Dial("tcp", backend)
	if err != nil {
		return
	}
	defer b.Close()
	done := make(chan struct{})
	go func() {
		p.answer(c, b)
		close(done)
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			counted(int64(n))
			if _, werr := b.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	_ = b.Close()
	<-done
}

// answer copies the backend's answers to the client, or resets the client's connection
// (SO_LINGER 0: an RST, no FIN) at a 412 when reset412 is set.
func (p *proxy) answer(c, b net.Conn) {
	defer c.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := b.Read(buf)
		if p.reset412 && bytes.HasPrefix(buf[:n], []byte("HTTP/1.1 412")) {
			p.resets.Add(1)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
			return
		}
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

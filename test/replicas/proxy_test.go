package replicas_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/pluginyard/registry/test/replicas"
)

// echoServer answers every connection with the bytes it receives.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); _ = c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// roundTrip sends data through the proxy on a new connection and reads the echo; an error
// says the target could not be reached (or was cut off on the way).
func roundTrip(addr string, data []byte) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(data); err != nil {
		return err
	}
	got := make([]byte, len(data))
	if _, err := io.ReadFull(c, got); err != nil {
		return err
	}
	if !bytes.Equal(got, data) {
		return errors.New("echo differs")
	}
	return nil
}

// TestProxyCuts: the fault tests rely on the proxy forwarding until cut, refusing while cut,
// cutting after a byte budget, and forwarding again once restored.
func TestProxyCuts(t *testing.T) {
	p, err := replicas.StartProxy(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	small, big := []byte("hello"), bytes.Repeat([]byte("x"), 256<<10)
	steps := []struct {
		name    string
		before  func()
		data    []byte
		reached bool
		down    bool
	}{
		{"forwards", func() {}, small, true, false},
		{"cut refuses", p.Cut, small, false, true},
		{"restored forwards", p.Restore, small, true, false},
		{"within the budget", func() { p.CutAfter(64 << 10) }, small, true, false},
		{"past the budget", func() {}, big, false, true},
		{"stays cut", func() {}, small, false, true},
		{"restored again", p.Restore, big, true, false},
	}
	for _, s := range steps {
		s.before()
		err := roundTrip(p.Addr(), s.data)
		if (err == nil) != s.reached || p.Down() != s.down {
			t.Errorf("%s: round trip of %d bytes: %v, down %t; want reached %t, down %t", s.name, len(s.data), err, p.Down(), s.reached, s.down)
		}
	}
}

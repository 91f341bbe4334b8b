package server

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"testing"
	"time"
)

// heldPair is a loopback connection: the accepted side as a *heldConn, and the client.
func heldPair(t *testing.T) (*heldConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sc.Close() })
	hc, err := newHeldConn(sc.(*net.TCPConn))
	if err != nil {
		t.Fatal(err)
	}
	return hc, client
}

// TestRawWritevWritesEveryPart: a list much larger than the socket's buffers, of parts of
// every size (empty ones included), read slowly by the peer, arrives whole and in order:
// the writev that the buffer cuts short goes on from the middle of a part after the
// poller says the socket is writable again, and the list kept for reuse holds no part.
func TestRawWritevWritesEveryPart(t *testing.T) {
	hc, client := heldPair(t)
	// Buffers of about one loopback segment (smaller ones stall the connection in TCP's
	// persist timer), far smaller than the list.
	_ = hc.SetWriteBuffer(64 << 10)
	_ = client.(*net.TCPConn).SetReadBuffer(64 << 10)
	rng := rand.New(rand.NewPCG(1, 2))
	var want bytes.Buffer
	parts := make([][]byte, 3000)
	for i := range parts {
		p := make([]byte, rng.IntN(3000))
		for j := range p {
			p[j] = byte(rng.Uint32())
		}
		parts[i] = p
		want.Write(p)
	}
	got := make(chan []byte, 1)
	go func() {
		var b bytes.Buffer
		buf := make([]byte, 1500)
		_ = client.SetReadDeadline(time.Now().Add(20 * time.Second)) // a liveness bound
		for b.Len() < want.Len() {
			n, err := client.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
			if b.Len()%7 == 0 {
				time.Sleep(time.Millisecond) // a slow reader: the writer waits for room
			}
		}
		got <- b.Bytes()
	}()
	_ = hc.SetWriteDeadline(time.Now().Add(20 * time.Second))
	n, err := hc.writeHeldAnd(nil, parts)
	if err != nil || n != int64(want.Len()) {
		t.Fatalf("writeHeldAnd = %d, %v; want %d bytes", n, err, want.Len())
	}
	if b := <-got; !bytes.Equal(b, want.Bytes()) {
		t.Errorf("the peer read %d bytes that differ from the %d written", len(b), want.Len())
	}
	for i, v := range hc.iov[:cap(hc.iov)] {
		if v.Base != nil {
			t.Fatalf("the reused writev list keeps part %d after the write", i)
		}
	}
}

// TestRawWritevPastTheDeadline: a writev the peer never reads fails at the write deadline
// with a timeout, having written what fit, instead of waiting for ever.
func TestRawWritevPastTheDeadline(t *testing.T) {
	hc, _ := heldPair(t)
	_ = hc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	big := make([]byte, 64<<20)
	n, err := hc.writeHeldAnd(nil, [][]byte{big, big})
	if !errors.Is(err, os.ErrDeadlineExceeded) || n >= int64(2*len(big)) {
		t.Fatalf("writev past the deadline = %d, %v; want a deadline error before all of it", n, err)
	}
}

// TestRawReadEOFAndDeadline: the lane's read answers what arrives, io.EOF once the peer has
// closed, and a timeout at the read deadline.
func TestRawReadEOFAndDeadline(t *testing.T) {
	hc, client := heldPair(t)
	_ = hc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	buf := make([]byte, 64)
	if _, err := hc.rawRead(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read with nothing sent: %v; want the deadline", err)
	}
	_ = hc.SetReadDeadline(time.Now().Add(10 * time.Second)) // a liveness bound
	if _, err := io.WriteString(client, "GET / HTTP/1.1\r\n"); err != nil {
		t.Fatal(err)
	}
	if n, err := hc.rawRead(buf); err != nil || string(buf[:n]) != "GET / HTTP/1.1\r\n" {
		t.Fatalf("read = %q, %v", buf[:n], err)
	}
	_ = client.Close()
	if n, err := hc.rawRead(buf); n != 0 || err != io.EOF {
		t.Fatalf("read after the peer closed = %d, %v; want io.EOF", n, err)
	}
}

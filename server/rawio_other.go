//go:build !linux

package server

import "net"

// Elsewhere the lane reads and writes through the *net.TCPConn (rawio_linux.go).

type rawIovec = struct{}

func (c *heldConn) rawRead(p []byte) (int, error) { return c.TCPConn.Read(p) }

func (c *heldConn) rawWritev(bufs [][]byte) (int64, error) {
	b := net.Buffers(bufs)
	return b.WriteTo(c.TCPConn)
}

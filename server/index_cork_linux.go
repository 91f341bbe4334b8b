//go:build linux

package server

import "syscall"

// setCork sets or clears TCP_CORK on the connection.
func setCork(raw syscall.RawConn, on bool) error {
	v := 0
	if on {
		v = 1
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK, v)
	}); err != nil {
		return err
	}
	return serr
}

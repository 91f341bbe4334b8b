//go:build linux

package server

import "syscall"

// setCorkFD sets or clears TCP_CORK on the socket fd.
func setCorkFD(fd uintptr, on bool) error {
	v := 0
	if on {
		v = 1
	}
	return syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK, v)
}

package server

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// On Linux the lane reads request heads and heldConn writes its writev lists with raw
// system calls on the non-blocking socket, inside the connection's syscall.RawConn (which
// keeps the deadlines and waits in the poller on EAGAIN). A call through package syscall
// tells the Go scheduler it may block: entering it wakes the runtime's monitor thread
// (sysmon) whenever every P was idle, which then polls every 20 µs for a while; at tens of
// thousands of small answers a second, on two cores, that was about a tenth of the
// registry's CPU per gzip /index.json (bench/README.md, session 14). A read or writev of a
// non-blocking socket returns at once (EAGAIN rather than waiting), so it need not tell
// the scheduler anything.

type rawIovec = syscall.Iovec

// rawRead reads into p (not empty) with read(2): io.EOF when the peer has closed.
func (c *heldConn) rawRead(p []byte) (int, error) {
	var n int
	var errno syscall.Errno
	err := c.raw.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait in the poller (or for the deadline)
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// rawWritev writes every byte of bufs with writev(2), as many calls as the socket's buffer
// needs, and returns how many it wrote. bufs has at most iovMax parts.
func (c *heldConn) rawWritev(bufs [][]byte) (int64, error) {
	iov := c.iov[:0]
	for _, b := range bufs {
		if len(b) > 0 {
			iov = append(iov, syscall.Iovec{Base: &b[0], Len: uint64(len(b))})
		}
	}
	defer func() { clear(iov[:cap(iov)]); c.iov = iov[:0] }() // keep no document alive
	var total int64
	var errno syscall.Errno
	left := iov
	err := c.raw.Write(func(fd uintptr) bool {
		for len(left) > 0 {
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&left[0])), uintptr(len(left)))
			switch e {
			case 0:
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // the socket's buffer is full: wait in the poller
			default:
				errno = e
				return true
			}
			total += int64(r)
			left = advance(left, uint64(r))
		}
		return true
	})
	switch {
	case err != nil:
		return total, err
	case errno != 0:
		return total, os.NewSyscallError("writev", errno)
	}
	return total, nil
}

// advance drops the first n bytes of iov: the parts wholly written, and the written start
// of the next.
func advance(iov []syscall.Iovec, n uint64) []syscall.Iovec {
	for n > 0 && len(iov) > 0 {
		if n >= iov[0].Len {
			n -= iov[0].Len
			iov = iov[1:]
			continue
		}
		iov[0].Base = (*byte)(unsafe.Add(unsafe.Pointer(iov[0].Base), n))
		iov[0].Len -= n
		n = 0
	}
	return iov
}

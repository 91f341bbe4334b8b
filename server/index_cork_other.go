//go:build !linux

package server

import (
	"errors"
	"syscall"
)

// setCork is Linux-only (TCP_CORK); elsewhere bodies are written uncorked.
func setCork(syscall.RawConn, bool) error { return errors.ErrUnsupported }

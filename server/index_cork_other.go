//go:build !linux

package server

import "errors"

// setCorkFD is Linux-only (TCP_CORK); elsewhere bodies are written uncorked.
func setCorkFD(uintptr, bool) error { return errors.ErrUnsupported }

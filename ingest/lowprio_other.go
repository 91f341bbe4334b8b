//go:build !linux

package ingest

import "errors"

var errNoThreadNice = errors.New("ingest: per-thread niceness is Linux only")

func setThreadNice(int) error { return errNoThreadNice }

func threadNice() (int, error) { return 0, errNoThreadNice }

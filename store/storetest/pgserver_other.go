//go:build !unix

package storetest

import "syscall"

// account is the user the server runs as; elsewhere than unix, always the current one.
type account struct {
	name     string
	uid, gid int
}

func serverUser() (*account, error) { return nil, nil }

func (a *account) procAttr() *syscall.SysProcAttr { return nil }

func (a *account) detachedAttr() *syscall.SysProcAttr { return nil }

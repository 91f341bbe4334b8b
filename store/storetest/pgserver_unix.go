//go:build unix

package storetest

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// account is the user the server runs as when the tests run as root.
type account struct {
	name     string
	uid, gid int
}

// serverUser is nil when the tests do not run as root: the server runs as the current
// user. As root it is the postgres user Debian's package creates, else nobody.
func serverUser() (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, uerr := strconv.Atoi(u.Uid)
		gid, gerr := strconv.Atoi(u.Gid)
		if err := errors.Join(uerr, gerr); err != nil {
			return nil, fmt.Errorf("user %s: %w", name, err)
		}
		return &account{name: name, uid: uid, gid: gid}, nil
	}
	return nil, errors.New("running as root, and there is neither a postgres nor a nobody user to run the server as (PostgreSQL refuses to run as root)")
}

// procAttr runs a program as a, with no supplementary groups; nil runs it as the current
// user.
func (a *account) procAttr() *syscall.SysProcAttr {
	if a == nil {
		return nil
	}
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(a.uid), Gid: uint32(a.gid), Groups: []uint32{}}}
}

// detachedAttr is procAttr in a new process group.
func (a *account) detachedAttr() *syscall.SysProcAttr {
	attr := a.procAttr()
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	attr.Setpgid = true
	return attr
}

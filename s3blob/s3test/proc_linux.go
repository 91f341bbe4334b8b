package s3test

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill the server when the test process dies without its
// cleanups (a timeout's panic, a SIGKILL), so no server outlives its test.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

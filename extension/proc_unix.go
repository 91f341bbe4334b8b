//go:build unix

package extension

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the extension in its own process group, so that killing it also
// ends what it started (`go run`, `npx` and shell wrappers start the real program as a child).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killProcess(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		_ = cmd.Process.Kill()
	}
}

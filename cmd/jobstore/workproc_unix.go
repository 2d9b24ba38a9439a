//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// jobProcess is a job's command and the process group it leads: the
// command runs in a group of its own (so the terminal's Ctrl-C reaches the
// worker alone, which decides), and stopping it signals the whole group,
// so that the shell a command line starts takes its children with it.
type jobProcess struct {
	cmd *exec.Cmd
}

// newJobProcess prepares cmd to run in a process group of its own, which
// on Linux also gets SIGKILL should the worker die (see dieWithWorker).
func newJobProcess(cmd *exec.Cmd) *jobProcess {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithWorker(cmd.SysProcAttr)
	return &jobProcess{cmd: cmd}
}

// started is called once cmd has started; nothing more to set up here.
func (p *jobProcess) started() error { return nil }

// terminate asks the command's process group to stop: SIGTERM.
func (p *jobProcess) terminate() error { return p.signalGroup(unix.SIGTERM) }

// kill ends the command's process group: SIGKILL.
func (p *jobProcess) kill() error { return p.signalGroup(unix.SIGKILL) }

// release frees what the process held once it has been waited for:
// nothing here. Processes the command started and left running keep
// running.
func (p *jobProcess) release() {}

func (p *jobProcess) signalGroup(sig unix.Signal) error {
	err := unix.Kill(-p.cmd.Process.Pid, sig)
	if errors.Is(err, unix.ESRCH) {
		return nil // the group is gone already
	}
	return err
}

// stopName and killName are how the stop and the kill after the grace are
// named in messages.
const (
	stopName = "SIGTERM"
	killName = "SIGKILL"
)

// exitOf is how a command that ran ended: its exit code as recorded in
// status.json, the signal that killed it ("" if none) and a description. A
// command killed by a signal is recorded as the shell does it, 128 + the
// signal's number.
func exitOf(ps *os.ProcessState) (code int, signal, how string) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig := ws.Signal()
		name := unix.SignalName(sig)
		return 128 + int(sig), name, fmt.Sprintf("was killed by signal %s (%d)", name, int(sig))
	}
	code = ps.ExitCode()
	return code, "", fmt.Sprintf("exited with status %d", code)
}

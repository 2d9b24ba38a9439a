//go:build unix && !linux

package supervise

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// groupPoll is how often the worker looks whether the command's process
// group is gone, once the command has exited.
const groupPoll = 10 * time.Millisecond

// killWait is how long the worker waits for the group to be gone after
// SIGKILL before it records the job (a process blocked in the kernel, on
// a hung mount, dies only when it leaves it).
const killWait = 5 * time.Second

// Process is a job's command and the process group it leads, where
// there is no supervisor (macOS, the BSDs): the command runs in a group of
// its own (so the terminal's Ctrl-C reaches the worker alone, which
// decides), stopping it signals the whole group, and once the command has
// exited what remains of its group is stopped too (SIGTERM, SIGKILL after
// the grace) before the job is recorded. A process that left the group
// (setsid, setpgid) is not reached, and a worker that dies leaves the
// command running: its job is marked lost meanwhile.
type Process struct {
	cmd   *exec.Cmd
	opt   Options
	pipes *jobPipes
}

func New(cmd *exec.Cmd, opt Options) *Process {
	return &Process{cmd: cmd, opt: opt}
}

// Start starts the command in a process group of its own.
func (p *Process) Start() error {
	pipes, err := newJobPipes(p.cmd)
	if err != nil {
		return err
	}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		pipes.abandon()
		return err
	}
	p.pipes = pipes
	pipes.started()
	return nil
}

// Terminate asks the command's process group to stop: SIGTERM.
func (p *Process) Terminate() error { return p.signalGroup(unix.SIGTERM) }

// Kill ends the command's process group: SIGKILL.
func (p *Process) Kill() error { return p.signalGroup(unix.SIGKILL) }

// Wait waits for the command, then stops what remains of its group, then
// reads its output to the end.
func (p *Process) Wait() End {
	err := p.cmd.Wait()
	end := endOf(p.cmd.ProcessState, err)
	end.Leftover = p.sweep()
	p.pipes.drain(OutputWaitDelay)
	return end
}

// sweep stops what remains of the command's group once the command has
// exited, and says what it did. The group's ID stays the command's as long
// as a member lives, and no process is given it meanwhile.
func (p *Process) sweep() string {
	if !p.groupAlive() {
		return ""
	}
	_ = p.signalGroup(unix.SIGTERM)
	if p.until(p.opt.Grace) {
		return leftoverNote(-1, 0, 0, p.opt.Grace)
	}
	_ = p.signalGroup(unix.SIGKILL)
	unkilled := 0
	if !p.until(killWait) {
		unkilled = -1
	}
	return leftoverNote(-1, -1, unkilled, p.opt.Grace)
}

// until waits up to d for the group to be gone, and reports whether it is.
func (p *Process) until(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for p.groupAlive() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(groupPoll)
	}
	return true
}

func (p *Process) groupAlive() bool {
	return !errors.Is(unix.Kill(-p.cmd.Process.Pid, 0), unix.ESRCH)
}

// Release frees what the process held: nothing here.
func (p *Process) Release() {}

func (p *Process) signalGroup(sig unix.Signal) error {
	err := unix.Kill(-p.cmd.Process.Pid, sig)
	if errors.Is(err, unix.ESRCH) {
		return nil // the group is gone already
	}
	return err
}

// exitOf is how a command that ran ended (exitOfStatus).
func exitOf(ps *os.ProcessState) (code int, signal, how string) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
		return exitOfStatus(ws)
	}
	code = ps.ExitCode()
	return code, "", fmt.Sprintf("exited with status %d", code)
}

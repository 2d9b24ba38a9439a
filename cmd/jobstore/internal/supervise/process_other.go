//go:build !unix && !windows

package supervise

import (
	"os/exec"
)

// Process is a job's command where there are neither process groups nor
// job objects (plan9, js, wasip1): it is stopped by killing it alone.
type Process struct {
	cmd *exec.Cmd
}

func New(cmd *exec.Cmd, _ Options) *Process { return &Process{cmd: cmd} }

func (p *Process) Start() error {
	p.cmd.WaitDelay = OutputWaitDelay
	return p.cmd.Start()
}

// Wait waits for the command and its output (OutputWaitDelay at most after
// it exits).
func (p *Process) Wait() End {
	err := p.cmd.Wait()
	return endOf(p.cmd.ProcessState, err)
}

// Terminate kills the command: there is no gentler request here.
func (p *Process) Terminate() error { return p.cmd.Process.Kill() }

func (p *Process) Kill() error { return p.cmd.Process.Kill() }

func (p *Process) Release() {}

// StopName and KillName are how the stop and the kill after the grace are
// named in messages: both are a kill here.
const (
	StopName = "kill"
	KillName = "kill"
)

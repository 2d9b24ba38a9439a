//go:build !unix && !windows

package main

import (
	"fmt"
	"os"
	"os/exec"
)

// jobProcess is a job's command where there are neither process groups nor
// job objects (plan9, js, wasip1): it is stopped by killing it alone.
type jobProcess struct {
	cmd *exec.Cmd
}

func newJobProcess(cmd *exec.Cmd, _ procOptions) *jobProcess { return &jobProcess{cmd: cmd} }

func (p *jobProcess) start() error {
	p.cmd.WaitDelay = outputWaitDelay
	return p.cmd.Start()
}

// wait waits for the command and its output (outputWaitDelay at most after
// it exits).
func (p *jobProcess) wait() procEnd {
	err := p.cmd.Wait()
	return procEndOf(p.cmd.ProcessState, err)
}

// terminate kills the command: there is no gentler request here.
func (p *jobProcess) terminate() error { return p.cmd.Process.Kill() }

func (p *jobProcess) kill() error { return p.cmd.Process.Kill() }

func (p *jobProcess) release() {}

// stopName and killName are how the stop and the kill after the grace are
// named in messages: both are a kill here.
const (
	stopName = "kill"
	killName = "kill"
)

func exitOf(ps *os.ProcessState) (code int, signal, how string) {
	code = ps.ExitCode()
	return code, "", fmt.Sprintf("exited with status %d", code)
}

// isStopCode reports whether an exit code is a death by a stop signal:
// never here, where there are no signals.
func isStopCode(int) bool { return false }

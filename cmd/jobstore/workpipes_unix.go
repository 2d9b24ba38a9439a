//go:build unix

package main

import (
	"io"
	"os"
	"os/exec"
	"time"
)

// jobPipes are a command's standard input and output as pipes the worker
// feeds and drains itself, rather than exec.Cmd's: the output is read until
// every process that holds it is gone (the command and what it started),
// not until the command alone exits, and the worker decides when that is.
type jobPipes struct {
	in      io.Reader
	out     io.Writer
	stdinW  *os.File // the worker's end of the command's standard input
	stdoutR *os.File // the worker's end of its standard output
	child   []*os.File
	drained chan struct{} // closed when the output reached its end (or was closed)
}

// newJobPipes puts pipes in place of cmd's Stdin and Stdout where they are
// not files already.
func newJobPipes(cmd *exec.Cmd) (*jobPipes, error) {
	p := &jobPipes{drained: make(chan struct{})}
	if in, ok := cmd.Stdin.(*os.File); !ok && cmd.Stdin != nil {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		p.in, p.stdinW, cmd.Stdin = cmd.Stdin, w, r
		p.child = append(p.child, r)
	} else {
		cmd.Stdin = in
	}
	if _, ok := cmd.Stdout.(*os.File); !ok && cmd.Stdout != nil {
		r, w, err := os.Pipe()
		if err != nil {
			p.abandon()
			return nil, err
		}
		p.out, p.stdoutR, cmd.Stdout = cmd.Stdout, r, w
		p.child = append(p.child, w)
	}
	return p, nil
}

// started closes the child's ends (the command holds them now) and starts
// feeding the input and reading the output.
func (p *jobPipes) started() {
	p.closeChild()
	if p.stdinW != nil {
		go func() {
			_, _ = io.Copy(p.stdinW, p.in) // a command that does not read its input ends the copy (EPIPE)
			_ = p.stdinW.Close()
		}()
	}
	if p.stdoutR == nil {
		close(p.drained)
		return
	}
	go func() {
		_, _ = io.Copy(p.out, p.stdoutR)
		close(p.drained)
	}()
}

// abandon closes every end: the command did not start.
func (p *jobPipes) abandon() {
	p.closeChild()
	for _, f := range []*os.File{p.stdinW, p.stdoutR} {
		if f != nil {
			_ = f.Close()
		}
	}
}

func (p *jobPipes) closeChild() {
	for _, f := range p.child {
		_ = f.Close()
	}
	p.child = nil
}

// drain waits for the end of the output, which comes once the last process
// holding it is gone: callers have made sure the command's processes are
// gone, so only one outside them (started for it by another process, or
// one that left the tree) can hold it; after delay the output is cut.
func (p *jobPipes) drain(delay time.Duration) {
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-p.drained:
	case <-t.C:
		if p.stdoutR != nil {
			_ = p.stdoutR.Close() // ends the copy
		}
		<-p.drained
	}
	if p.stdoutR != nil {
		_ = p.stdoutR.Close()
	}
	if p.stdinW != nil {
		_ = p.stdinW.Close() // ends a copy that nobody reads
	}
}

//go:build unix

package supervise

import (
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// jobPipes are a command's standard input and outputs as pipes the worker
// feeds and drains itself, rather than exec.Cmd's: the output is read until
// every process that holds it is gone (the command and what it started),
// not until the command alone exits, and the worker decides when that is.
type jobPipes struct {
	in      io.Reader
	stdinW  *os.File    // the worker's end of the command's standard input
	outs    []outputEnd // the worker's ends of its standard output and error
	child   []*os.File
	drained chan struct{} // closed when every output reached its end (or was closed)
}

// outputEnd is one of the command's outputs as the worker reads it: r,
// copied to w.
type outputEnd struct {
	r *os.File
	w io.Writer
}

// newJobPipes puts pipes in place of cmd's Stdin, Stdout and Stderr where
// they are not files already.
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
	for _, out := range []*io.Writer{&cmd.Stdout, &cmd.Stderr} {
		if _, ok := (*out).(*os.File); ok || *out == nil {
			continue
		}
		r, w, err := os.Pipe()
		if err != nil {
			p.abandon()
			return nil, err
		}
		p.outs = append(p.outs, outputEnd{r: r, w: *out})
		*out = w
		p.child = append(p.child, w)
	}
	return p, nil
}

// started closes the child's ends (the command holds them now) and starts
// feeding the input and reading the outputs.
func (p *jobPipes) started() {
	p.closeChild()
	if p.stdinW != nil {
		go func() {
			_, _ = io.Copy(p.stdinW, p.in) // a command that does not read its input ends the copy (EPIPE)
			_ = p.stdinW.Close()
		}()
	}
	var copies sync.WaitGroup
	for _, o := range p.outs {
		copies.Go(func() { _, _ = io.Copy(o.w, o.r) })
	}
	go func() {
		copies.Wait()
		close(p.drained)
	}()
}

// abandon closes every end: the command did not start.
func (p *jobPipes) abandon() {
	p.closeChild()
	p.closeOutputs()
	if p.stdinW != nil {
		_ = p.stdinW.Close()
	}
}

func (p *jobPipes) closeChild() {
	for _, f := range p.child {
		_ = f.Close()
	}
	p.child = nil
}

func (p *jobPipes) closeOutputs() {
	for _, o := range p.outs {
		_ = o.r.Close()
	}
}

// drain waits for the end of the outputs, which comes once the last
// process holding them is gone: callers have made sure the command's
// processes are gone, so only one outside them (started for it by another
// process, or one that left the tree) can hold them; after delay the
// output is cut.
func (p *jobPipes) drain(delay time.Duration) {
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-p.drained:
	case <-t.C:
		p.closeOutputs() // ends the copies
		<-p.drained
	}
	p.closeOutputs()
	if p.stdinW != nil {
		_ = p.stdinW.Close() // ends a copy that nobody reads
	}
}

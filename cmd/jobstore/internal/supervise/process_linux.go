package supervise

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// beatsPerLease is how often, per lease period, the worker tells the
// supervisor when the lease was last renewed: the renewal the library makes
// every third of a lease reaches the supervisor within a 24th of a lease,
// well before the watchdog's half.
const beatsPerLease = 24

// Process is a job's command run under its supervisor (supervisor_linux.go),
// a process of the jobstore binary that starts the command, is the ancestor
// of every process the command starts, and ends them all when the command
// exits, when the worker asks, when the worker dies and when the worker
// stops renewing the job's lease.
type Process struct {
	cmd   *exec.Cmd // the command, as the worker would run it
	opt   Options
	sup   *exec.Cmd      // its supervisor
	cg    *attemptCgroup // the attempt's cgroup, the supervisor's and all below it; nil where none can be had
	mark  string         // without a cgroup: attemptMarkEnv's line in the environment of every process of the attempt
	ctrl  *os.File       // the worker's end of the control pipe
	rep   *bufio.Reader
	repR  *os.File
	pid   int // the command's
	pipes *jobPipes
	beats chan struct{} // closed to stop the heartbeat
	once  sync.Once     // release

	mu      sync.Mutex
	forced  string      // why the worker killed the supervisor itself; "" if it did not
	giveUp  *time.Timer // kills the supervisor that does not end after a kill request
	endedCh chan struct{}
}

// attemptMarkEnv is set, where the attempt has no cgroup, in the
// environment of the supervisor and so of every process of the command
// that keeps it: should the supervisor be killed, the worker finds its
// orphans by it.
const attemptMarkEnv = "JOBSTORE_ATTEMPT_MARK"

// superviseAnswer is how long past superviseKillWait the worker waits for
// a supervisor asked to kill its tree to end, before it kills the
// supervisor and the tree itself: a supervisor that does not end by then
// is stopped (SIGSTOP), starved or broken.
const superviseAnswer = 2 * time.Second

func New(cmd *exec.Cmd, opt Options) *Process {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return &Process{cmd: cmd, opt: opt, mark: hex.EncodeToString(b[:]), endedCh: make(chan struct{})}
}

// Start starts the supervisor, which starts the command, and returns once
// the command runs, or with the error that kept it from running (as
// exec.Cmd's Start would return it).
func (p *Process) Start() (err error) {
	if p.cmd.Err != nil {
		return p.cmd.Err // not found
	}
	pipes, err := newJobPipes(p.cmd)
	if err != nil {
		return err
	}
	var files []*os.File // closed on return: the supervisor holds its ends
	defer func() {
		for _, f := range files {
			_ = f.Close()
		}
		if err != nil {
			pipes.abandon()
		}
	}()
	ctrlR, ctrlW, err := os.Pipe()
	if err != nil {
		return err
	}
	files = append(files, ctrlR)
	repR, repW, err := os.Pipe()
	if err != nil {
		_ = ctrlW.Close()
		return err
	}
	files = append(files, repW)
	period, renewed := p.opt.Lease.Lease()
	// /proc/self/exe: this very binary, even if the file was replaced or
	// removed since the worker started.
	newSup := func() *exec.Cmd {
		sup := exec.Command("/proc/self/exe")
		sup.Args = append([]string{"jobstore", Arg, p.opt.Grace.String(), period.String(),
			time.Since(renewed).String(), p.cmd.Path}, p.cmd.Args...)
		sup.Env, sup.Dir = p.cmd.Env, p.cmd.Dir
		sup.Stdin, sup.Stdout, sup.Stderr = p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr
		sup.ExtraFiles = []*os.File{ctrlR, repW}
		// Its own process group: the terminal's Ctrl-C reaches the worker
		// alone, which decides.
		sup.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if p.cg != nil {
			sup.SysProcAttr.UseCgroupFD, sup.SysProcAttr.CgroupFD = true, p.cg.fd
		} else {
			sup.Env = append(slices.Clone(sup.Env), attemptMarkEnv+"="+p.mark)
		}
		return sup
	}
	cg, cgErr := newAttemptCgroup()
	p.cg = cg
	sup := newSup()
	err = sup.Start()
	if err != nil && cg != nil { // clone3 refused (a seccomp filter, a threaded cgroup)
		cgErr = err
		p.cg = nil
		cg.remove()
		sup = newSup()
		err = sup.Start()
	}
	if cgErr != nil {
		p.opt.NoCgroup(cgErr)
	}
	if err != nil {
		_, _ = ctrlW.Close(), repR.Close()
		p.removeCgroup()
		return fmt.Errorf("cannot start the job's supervisor (%s %s): %w", os.Args[0], Arg, err)
	}
	p.sup, p.ctrl, p.repR, p.rep = sup, ctrlW, repR, bufio.NewReader(repR)
	_, _ = ctrlR.Close(), repW.Close()
	files = nil
	first, rerr := p.readReport()
	switch {
	case rerr != nil:
		_ = sup.Process.Kill()
		_ = sup.Wait()
		p.Release()
		p.killTree()
		p.removeCgroup()
		return fmt.Errorf("the job's supervisor did not start the command: %w", rerr)
	case first.StartError != nil:
		_ = sup.Wait()
		p.Release()
		p.removeCgroup()
		return first.StartError.err()
	}
	p.pid = first.Started
	p.pipes = pipes
	pipes.started()
	p.beats = make(chan struct{})
	go p.heartbeat(period)
	return nil
}

// heartbeat tells the supervisor, beatsPerLease times a lease (at least
// every superviseAnswer), how long ago the lease was last renewed, and
// kills a supervisor hung for superviseAnswer (hung): stopped with its
// command exited, it would hold the attempt running until it runs again.
// It reads what the library knows rather than counting on its own: a
// worker whose renewals hang (a hung mount) sends the same renewal again,
// which is what lets the watchdog stop the tree.
func (p *Process) heartbeat(period time.Duration) {
	t := time.NewTicker(max(min(period/beatsPerLease, superviseAnswer), time.Millisecond))
	defer t.Stop()
	var hungSince time.Time
	for {
		_, renewed := p.opt.Lease.Lease()
		p.send("beat " + strconv.FormatInt(time.Since(renewed).Milliseconds(), 10))
		switch {
		case !p.hung():
			hungSince = time.Time{}
		case hungSince.IsZero():
			hungSince = time.Now()
		case time.Since(hungSince) >= superviseAnswer:
			p.killSupervisor(fmt.Sprintf("ended while its supervisor was stopped (SIGSTOP) for %v or more, and was killed with it and what it left", superviseAnswer))
		}
		select {
		case <-p.beats:
			return
		case <-t.C:
		}
	}
}

// send writes a line to the supervisor; one that is gone (EPIPE, or its
// pipe released) has nothing left to stop.
func (p *Process) send(line string) error {
	_, err := p.ctrl.Write([]byte(line + "\n"))
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}

// Terminate asks the supervisor to stop the command and every process it
// started: SIGTERM, then SIGKILL after the grace (the supervisor keeps the
// time too, should the worker not).
func (p *Process) Terminate() error { return p.send("term") }

// Kill asks the supervisor to kill the command and every process it
// started: SIGKILL. A supervisor that is stopped (SIGSTOP), or that has not
// ended superviseKillWait+superviseAnswer later, is killed by the worker
// with the whole tree (its cgroup; without one, what it can reach).
func (p *Process) Kill() error {
	err := p.send("kill")
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.giveUp != nil {
		return err
	}
	wait := superviseKillWait + superviseAnswer
	if st, ok := readProc(p.sup.Process.Pid); ok && st.stopped {
		wait = 0
	}
	p.giveUp = time.AfterFunc(wait, func() {
		p.killSupervisor(fmt.Sprintf("was killed with its supervisor, which had not ended %v after it was asked to kill it (stopped, or starved)", wait))
	})
	return err
}

// killSupervisor kills the supervisor, unless it has ended: wait then
// kills the whole tree, and says how the command ended: how.
func (p *Process) killSupervisor(how string) {
	select {
	case <-p.endedCh:
		return
	default:
	}
	p.mu.Lock()
	if p.forced == "" {
		p.forced = how
	}
	p.mu.Unlock()
	_ = p.sup.Process.Kill()
}

// hung reports whether the supervisor is stopped (SIGSTOP) while its
// command has exited (a zombie it cannot reap, or reaped just before the
// stop): it cannot report until it runs again.
func (p *Process) hung() bool {
	sup, ok := readProc(p.sup.Process.Pid)
	if !ok || !sup.stopped {
		return false
	}
	cmd, ok := readProc(p.pid)
	return !ok || cmd.zombie || cmd.ppid != sup.pid // gone, dead, or its pid given to another
}

// killTree kills what is left of the attempt once its supervisor is gone,
// and returns how many processes had still not ended after
// superviseKillWait: with a cgroup, every process in it; without one, the
// command's process group and every process that kept the attempt's mark
// in its environment, until a scan finds none (a process that changed its
// environment, and left the group, escapes).
func (p *Process) killTree() int {
	if p.cg != nil {
		return p.cg.killAll(superviseKillWait)
	}
	if p.pid > 0 {
		_ = unix.Kill(-p.pid, unix.SIGKILL)
	}
	return killMarked(attemptMarkEnv+"="+p.mark, superviseKillWait)
}

// removeCgroup removes the attempt's cgroup, if it has one.
func (p *Process) removeCgroup() {
	if p.cg != nil {
		p.cg.remove()
	}
}

// Wait waits for the supervisor: it ends once the command and every
// process it started are gone, and reports how the command ended. Then the
// output is read to its end.
func (p *Process) Wait() End {
	werr := p.sup.Wait()
	close(p.endedCh)
	p.mu.Lock()
	if p.giveUp != nil {
		p.giveUp.Stop()
	}
	forced := p.forced
	p.mu.Unlock()
	close(p.beats) // not waited for: it may be waiting for the Run, which is not ours to wait for
	var last *superviseReport
	for {
		r, err := p.readReport()
		if err != nil {
			break
		}
		if r.Ended {
			last = &r
		}
	}
	var end End
	defer p.removeCgroup()
	if last == nil {
		// The supervisor died before its report (killed): everything of
		// the attempt is killed, and the attempt ends once it is gone, so
		// that a retry never runs beside what is left of it.
		unkilled := p.killTree()
		cause := "it ended without a report"
		if werr != nil {
			cause = werr.Error()
		}
		end.Err = fmt.Errorf("the job's supervisor failed: %s", cause)
		end.How = "could not be waited for: " + end.Err.Error() + "; every process of the attempt was killed"
		if forced != "" {
			end.Err = errors.New("the job's supervisor did not end")
			end.How = forced
		}
		if unkilled > 0 {
			end.How += fmt.Sprintf("; %d had not ended when the job was recorded (the kill takes effect when they leave the kernel)", unkilled)
		}
	} else {
		end.Exited = true
		end.Code, end.Signal, end.How = exitOfStatus(syscall.WaitStatus(last.Status))
		if p.cg != nil && p.cg.populated() {
			// What left the supervisor's tree and its scans (it cannot
			// leave the cgroup).
			n := len(p.cg.procs())
			last.Left += n
			last.StillThere += n
			last.Unkilled += p.cg.killAll(superviseKillWait)
		}
		end.Leftover = leftoverNote(last.Left, last.StillThere, last.Unkilled, p.opt.Grace)
		end.StoppedBy = last.Stopped
		if last.Note != "" {
			p.opt.Warn("%s", last.Note)
		}
		if last.WatchdogMS > 0 {
			end.Watchdog = fmt.Sprintf("stopped by the supervisor: the worker did not renew its lease for %v (the lease is %v; the command is stopped once half of it passes unrenewed, before another host may take the job over)",
				time.Duration(last.WatchdogMS)*time.Millisecond, time.Duration(last.LeaseMS)*time.Millisecond)
		}
	}
	p.pipes.drain(OutputWaitDelay)
	return end
}

func (p *Process) readReport() (superviseReport, error) {
	var r superviseReport
	line, err := p.rep.ReadBytes('\n')
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return r, fmt.Errorf("unreadable report %q: %w", line, err)
	}
	return r, nil
}

// Release closes the pipes to the supervisor; one still running (it
// should not be) then kills what it supervises.
func (p *Process) Release() {
	p.once.Do(func() {
		if p.ctrl != nil {
			_ = p.ctrl.Close()
			_ = p.repR.Close()
		}
	})
}

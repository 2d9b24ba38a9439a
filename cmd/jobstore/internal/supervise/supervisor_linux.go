package supervise

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Arg is the first argument of a job's supervisor: the jobstore
// binary run again by the worker, as "jobstore __supervise GRACE LEASE
// RENEWED-AGO PATH ARG0 [ARG...]", one per job. The supervisor is a child
// subreaper: every process the command starts stays below it, whatever
// happens to the processes in between, and it is what ends them all:
//   - when the command exits: what it left running gets SIGTERM, then
//     SIGKILL after the grace; the supervisor reports once they are gone;
//   - when the worker asks (a cancel): the same, command included;
//   - when the worker dies (its end of the control pipe closes): SIGKILL;
//   - when the worker has not renewed the job's lease for half of it
//     (watchdogStopNum/Den): SIGTERM, then SIGKILL by two thirds of it
//     (watchdogKillNum/Den), the moment the worker itself counts its lease
//     lapsed, a third of a lease before any other process may judge it
//     gone.
//
// Protocol: fd 3 is the control pipe from the worker, lines "beat MS" (the
// lease was last renewed MS milliseconds ago), "term", "kill"; fd 4 is the
// report pipe to the worker, JSON lines (superviseReport): one when the
// command started or could not be, one when everything is over. Standard
// input, output and error are the command's.
const Arg = "__supervise"

// Exit codes of Main, as the jobstore command's own.
const (
	exitOK    = 0
	exitUsage = 2
)

// The watchdog's points, as parts of the lease since its last renewal.
const (
	watchdogStopNum, watchdogStopDen = 1, 2 // SIGTERM: one renewal (every third) missed by half a period
	watchdogKillNum, watchdogKillDen = 2, 3 // SIGKILL at the latest: the Run's own lapse
)

// superviseKillWait is how long the supervisor waits, after SIGKILL, for
// the processes to be gone before it reports (a process blocked in the
// kernel, on a hung mount, dies only when it leaves it: the kill is
// pending, and it is counted as not ended).
const superviseKillWait = 5 * time.Second

// superviseKillRetry is how often SIGKILL is sent again to what is left,
// for a process forked while the last round was sent.
const superviseKillRetry = 20 * time.Millisecond

// treeScans bounds the scans of one signalTree: a fork chain that outruns
// them is caught by the next round (the kill is sent again every
// superviseKillRetry).
const treeScans = 50

// superviseReport is a line on the report pipe.
type superviseReport struct {
	Started    int             `json:"started,omitempty"`     // the command's pid
	StartError *superviseError `json:"start_error,omitempty"` // the command could not be started
	Ended      bool            `json:"ended,omitempty"`       // the last line: all is over
	Status     uint32          `json:"status"`                // the command's wait status, when Ended
	Left       int             `json:"left"`                  // processes still running when the command exited
	StillThere int             `json:"still"`                 // processes killed after the grace (SIGTERM did not end them)
	Unkilled   int             `json:"unkilled"`              // processes not gone superviseKillWait after SIGKILL
	WatchdogMS int64           `json:"watchdog_ms"`           // >0: stopped by the watchdog, the lease then unrenewed for this long
	Stopped    string          `json:"stopped,omitempty"`     // the stop signal the supervisor itself got ("SIGTERM"): its processes are being stopped
	LeaseMS    int64           `json:"lease_ms"`
	Note       string          `json:"note,omitempty"` // what went wrong in the supervisor itself
}

// superviseError is an error of the command's start (os.StartProcess's
// *os.PathError), so that the worker reports it as it would its own.
type superviseError struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Errno int    `json:"errno"`
	Text  string `json:"text"`
}

func (e *superviseError) err() error {
	if e.Errno != 0 {
		return &os.PathError{Op: e.Op, Path: e.Path, Err: syscall.Errno(e.Errno)}
	}
	return fmt.Errorf("%s", e.Text)
}

// supervisor is the state of one "jobstore __supervise".
type supervisor struct {
	self         int
	grace, lease time.Duration
	renewed      time.Time // the lease's last renewal, by this process's clock
	report       *os.File

	cmdPid     int
	cmdDone    bool
	status     syscall.WaitStatus
	termAt     time.Time // when the tree got SIGTERM; zero: not yet
	killAt     time.Time // when it first got SIGKILL; zero: not yet
	watchdogAt time.Duration
	rep        superviseReport
	group      *attemptCgroup // the attempt's cgroup, this process's; nil where the attempt has none
}

// Main runs the supervisor mode (see Arg) and returns its exit code.
func Main(args []string, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "jobstore %s: "+format+"\n", append([]any{Arg}, a...)...)
		return exitUsage
	}
	if len(args) < 5 {
		return fail("this is how 'jobstore work' runs a job's command; it is not a command to run")
	}
	var d [3]time.Duration
	for i := range d {
		v, err := time.ParseDuration(args[i])
		if err != nil {
			return fail("bad duration %q", args[i])
		}
		d[i] = v
	}
	for _, fd := range []int{3, 4} {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
			return fail("fd %d is not a pipe: this is how 'jobstore work' runs a job's command; it is not a command to run", fd)
		}
		syscall.CloseOnExec(fd) // the command gets neither
	}
	s := &supervisor{self: os.Getpid(), grace: d[0], lease: d[1], renewed: time.Now().Add(-d[2]),
		report: os.NewFile(4, "report")}
	s.rep.LeaseMS = s.lease.Milliseconds()
	if dir, err := ownCgroupDir(); err == nil && strings.HasPrefix(filepath.Base(dir), cgroupPrefix) {
		s.group = &attemptCgroup{dir: dir, fd: -1}
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		s.rep.Note = "cannot become a child subreaper: " + err.Error() + "; processes whose parent ends are not stopped"
	}
	// Signals that would end the supervisor stop the tree instead, unless
	// ignored (the worker's own choice, which the command inherits).
	sigs := make(chan os.Signal, 1)
	for _, sig := range []os.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT} {
		if !signal.Ignored(sig) {
			signal.Notify(sigs, sig)
		}
	}
	pid, err := syscall.ForkExec(args[3], args[4:], &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		// Its own process group, as without a supervisor; SIGKILL should
		// the supervisor itself be killed. The signal follows the thread
		// that forked, which Go ends only when a goroutine locked to it
		// exits, which this program never does.
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		se := &superviseError{Op: "fork/exec", Path: args[3], Text: err.Error()}
		if errno, ok := err.(syscall.Errno); ok {
			se.Errno = int(errno)
		}
		s.send(superviseReport{StartError: se})
		return exitOK
	}
	s.cmdPid = pid
	s.send(superviseReport{Started: pid})
	s.run(readControl(os.NewFile(3, "control")), reap(), sigs)
	s.settle(sigs)
	s.rep.Ended = true
	s.rep.Status = uint32(s.status)
	if s.watchdogAt > 0 {
		s.rep.WatchdogMS = s.watchdogAt.Milliseconds()
	}
	s.send(s.rep)
	return exitOK
}

func (s *supervisor) send(r superviseReport) {
	b, _ := json.Marshal(r)
	_, _ = s.report.Write(append(b, '\n')) // a worker that is gone reads nothing
}

// controlEvent is a line of the control pipe; eof: the worker is gone.
type controlEvent struct {
	word string
	ms   int64
	eof  bool
}

func readControl(f *os.File) <-chan controlEvent {
	c := make(chan controlEvent)
	go func() {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			word, arg, _ := strings.Cut(sc.Text(), " ")
			ms, _ := strconv.ParseInt(arg, 10, 64)
			c <- controlEvent{word: word, ms: ms}
		}
		c <- controlEvent{eof: true}
	}()
	return c
}

// reapEvent is a child reaped; none: no child is left, nor can one come.
type reapEvent struct {
	pid  int
	ws   syscall.WaitStatus
	none bool
}

// reap reaps every child of the supervisor (the command, and every
// process of its tree whose parent ended before it) until none is left.
func reap() <-chan reapEvent {
	c := make(chan reapEvent)
	go func() {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil { // ECHILD
				c <- reapEvent{none: true}
				return
			}
			c <- reapEvent{pid: pid, ws: ws}
		}
	}()
	return c
}

// run handles events until every process of the tree is gone (or did not
// end superviseKillWait after SIGKILL).
func (s *supervisor) run(control <-chan controlEvent, reaped <-chan reapEvent, sigs <-chan os.Signal) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		timer.Reset(time.Until(s.next()))
		select {
		case r := <-reaped:
			if r.none {
				return
			}
			switch {
			case r.pid == s.cmdPid:
				s.cmdDone, s.status = true, r.ws
				if live := descendants(s.self); len(live) > 0 {
					s.rep.Left = len(live)
					s.terminate()
				}
			case s.cmdDone && s.termAt.IsZero() && s.killAt.IsZero():
				// A process of the tree ended after the command, unseen by
				// the scan at its exit (a fork chain: each hop forks and
				// exits, and one was between the two): what it left is
				// stopped too.
				s.rep.Left += 1 + len(descendants(s.self))
				s.terminate()
			}
		case ev := <-control:
			switch {
			case ev.eof:
				control = nil // the worker is gone: nobody is left to report to or to wait for
				s.kill()
			case ev.word == "beat":
				if at := time.Now().Add(-time.Duration(ev.ms) * time.Millisecond); at.After(s.renewed) {
					s.renewed = at
				}
			case ev.word == "term":
				s.terminate()
			case ev.word == "kill":
				s.kill()
			}
		case sig := <-sigs:
			s.stoppedBy(sig)
			s.terminate()
		case <-timer.C:
			now := time.Now()
			switch {
			case !s.killAt.IsZero() && now.Sub(s.killAt) >= superviseKillWait:
				s.rep.Unkilled = len(descendants(s.self))
				return
			case !s.killAt.IsZero():
				s.kill() // again, for what was forked meanwhile
			case !s.termAt.IsZero() && !now.Before(s.killDeadline()):
				s.kill()
			case s.termAt.IsZero() && !now.Before(s.watchdogDeadline()):
				s.watchdogAt = now.Sub(s.renewed)
				s.terminate()
			}
		}
	}
}

// stoppedBy notes the first stop signal the supervisor got.
func (s *supervisor) stoppedBy(sig os.Signal) {
	if s.rep.Stopped == "" {
		s.rep.Stopped = unix.SignalName(sig.(syscall.Signal))
	}
}

// settle waits up to StopSettle for a stop signal of the supervisor's own
// when the command died of one that the supervisor did not send.
func (s *supervisor) settle(sigs <-chan os.Signal) {
	if s.rep.Stopped != "" || !s.termAt.IsZero() || !s.killAt.IsZero() || !diedOfStop(s.status) {
		return
	}
	t := time.NewTimer(StopSettle)
	defer t.Stop()
	select {
	case sig := <-sigs:
		s.stoppedBy(sig)
	case <-t.C:
	}
}

// diedOfStop reports whether a command that ended with ws died of a stop
// signal (SIGTERM, SIGINT, SIGHUP), or exited as a shell does when one
// ended what it waited for (128 + the signal's number).
func diedOfStop(ws syscall.WaitStatus) bool {
	code, _, _ := exitOfStatus(ws)
	return IsStopCode(code)
}

// next is when the timer should next fire.
func (s *supervisor) next() time.Time {
	switch {
	case !s.killAt.IsZero():
		return time.Now().Add(superviseKillRetry)
	case !s.termAt.IsZero():
		return s.killDeadline()
	default:
		return s.watchdogDeadline()
	}
}

func (s *supervisor) watchdogDeadline() time.Time {
	return s.renewed.Add(s.lease * watchdogStopNum / watchdogStopDen)
}

// killDeadline is when the tree, asked to stop, gets SIGKILL: after the
// grace, or once the last renewal is watchdogKillNum/Den of a lease old if
// sooner.
func (s *supervisor) killDeadline() time.Time {
	d := s.termAt.Add(s.grace)
	if byLease := s.renewed.Add(s.lease * watchdogKillNum / watchdogKillDen); byLease.Before(d) {
		return byLease
	}
	return d
}

// terminate sends SIGTERM to every process of the tree, once.
func (s *supervisor) terminate() {
	if !s.termAt.IsZero() || !s.killAt.IsZero() {
		return
	}
	s.termAt = time.Now()
	s.signalTree(unix.SIGTERM)
}

// kill sends SIGKILL to every process of the tree; the first time, after
// a SIGTERM, it counts those that the SIGTERM left running (the command
// aside, which the worker names itself).
func (s *supervisor) kill() {
	if s.killAt.IsZero() {
		s.killAt = time.Now()
		if !s.termAt.IsZero() && s.cmdDone {
			s.rep.StillThere = len(descendants(s.self))
		} else if !s.termAt.IsZero() {
			for _, p := range descendants(s.self) {
				if p.pid != s.cmdPid {
					s.rep.StillThere++
				}
			}
		}
	}
	s.signalTree(unix.SIGKILL)
}

// signalTree sends sig to every process of the tree, scanning again until
// a scan finds no process it has not signalled (one forked meanwhile), at
// most treeScans times.
func (s *supervisor) signalTree(sig unix.Signal) {
	if s.group != nil {
		s.signalGroup(sig)
	}
	type procKey struct {
		pid   int
		start uint64
	}
	done := make(map[procKey]bool)
	for range treeScans {
		fresh := false
		for _, p := range descendants(s.self) {
			if k := (procKey{p.pid, p.start}); !done[k] {
				done[k], fresh = true, true
				signalProc(s.self, p, sig)
			}
		}
		if !fresh {
			return
		}
	}
}

// signalGroup sends sig to every process of the attempt's cgroup but the
// supervisor, reading cgroup.procs again until it lists none that has not
// had it, at most treeScans times. A process forked is in the cgroup at
// once and cannot leave it, so a fork chain, which can outrun scans of
// /proc on a busy host, is found here.
func (s *supervisor) signalGroup(sig unix.Signal) {
	done := make(map[int]bool)
	for range treeScans {
		fresh := false
		for _, pid := range s.group.procs() {
			if pid != s.self && !done[pid] {
				done[pid], fresh = true, true
				_ = unix.Kill(pid, sig)
			}
		}
		if !fresh {
			return
		}
	}
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

// defaultGrace is how long a command asked to stop has before it is killed.
const defaultGrace = 10 * time.Second

func workCmd() *command {
	return &command{
		name:    "work",
		args:    "ROOT [--kind K]... [--parallel N] [--grace D] [--lease D] [--until-empty] [--fail-fast N] [--fail-fast-within D] [--log-limit SIZE] [--json] [--scan D] [--metrics HOST:PORT] -- COMMAND [ARG...]",
		summary: "run COMMAND for each queued job of ROOT, N at a time, on this host",
		doc: `Runs the queued jobs of ROOT: COMMAND once for each job that is due, highest
priority first, then oldest, --parallel at a time, until stopped (or, with
--until-empty, until none is left). Any number of workers, on any number of
hosts sharing ROOT, may run at once: each job is started by exactly one of
them, and a job whose worker is gone is rescued.

Examples:
  jobstore work /srv/jobs -- ./render.sh
  jobstore work /srv/jobs --kind render --parallel 4 -- python3 render.py
  jobstore work /srv/jobs --until-empty --json -- ./run-job

COMMAND gets JOBSTORE_JOB_DIR and JOBSTORE_JOB_ID in its environment and the
job's params as JSON on standard input. A line "progress FRACTION [MESSAGE]"
on its standard output (FRACTION within [0, 1]) is the job's progress. Its
output is kept in the job directory ('jobstore logs DIR'). Exit status 0:
the job succeeded; anything else: it failed, and is queued again while it
has attempts left (submit --max-attempts). A cancel request or the job's
--timeout stops the command and what it started (SIGTERM, then SIGKILL
after --grace); what it leaves running when it exits is stopped too.

The first SIGINT or SIGTERM (Ctrl-C) stops the worker taking jobs and waits
for the running ones; a second one stops them and queues their jobs again.
A COMMAND that cannot be started, or --fail-fast jobs in a row that fail
fast the same way, stop the worker (exit 7); the other jobs stay queued.
It prints a line when a job starts and when it ends:

  2026-11-30T09:35:52Z end   ID succeeded exit 0 after 12s

Exit codes: 0 --until-empty, and every job it ran succeeded; 1 --until-empty,
and one did not; 2 bad arguments; 3 ROOT unreadable, COMMAND not found, an
outcome not written; 7 COMMAND cannot run jobs; stopped by a signal: ends by it.
Details: docs/cli.md#work`,
		minPos: 1, maxPos: 1, posNames: "ROOT", commandAfterDash: true,
		define: defineWork,
	}
}

// worker runs jobs for "jobstore work".
type worker struct {
	root     string
	argv     []string
	grace    time.Duration
	asJSON   bool
	stderr   io.Writer
	logLimit int64    // the most bytes kept of each output file; 0: no limit
	failFast failFast // when a run of fast failures stops the worker

	metrics *workMetrics // --metrics; nil: none

	mu  sync.Mutex // serialises lines on out and stderr; guards what follows
	out io.Writer
	// failed: a job's outcome could not be written; said on its end line,
	// and the worker exits 3.
	failed bool
	// unsuccessful: a job it ran did not succeed (--until-empty exits 1).
	unsuccessful bool
	// broken: why the worker stopped taking jobs because its command cannot
	// run them (it cannot be started, or its jobs fail fast); nil if not.
	broken error
	streak fastStreak
	// active is how many jobs' commands run. launches holds a channel per
	// job allowed by the gate whose handler has not begun yet, oldest
	// first; launched is the one of the job taken last, closed once its
	// command has started, or its job ended.
	active   int
	launches []chan struct{}
	launched chan struct{}

	stopTaking context.CancelFunc // the Worker takes no more jobs
	stop       *workStop
	cgroupNote sync.Once // noCgroup
}

// noCgroup says, once, why the jobs' processes run without a cgroup of
// their own (see docs/guarantees.md, "What ends with a job's attempt"),
// where the worker runs as root: elsewhere that is the rule (unless the
// worker's cgroup is delegated to its user), not news.
func (wk *worker) noCgroup(err error) {
	if os.Geteuid() != 0 {
		return
	}
	wk.cgroupNote.Do(func() {
		wk.warnf("the jobs' commands run without a cgroup of their own (%v): should a job's supervisor be killed, its processes are found by their process group and environment, and one that left both may outlive the attempt", err)
	})
}

// workOptions are what "jobstore work" is told: ROOT, its flags and the
// command to run for each job.
type workOptions struct {
	Root        string
	Argv        []string      // the command and its arguments
	Kinds       []string      // take only jobs of these kinds; none: any
	Parallel    int           // run up to this many jobs at a time
	Grace       time.Duration // between SIGTERM and SIGKILL when a command is stopped
	UntilEmpty  bool          // exit once no job is due and no command runs
	JSON        bool          // print one JSON object per line
	Scan        time.Duration // look at Root this often even without events
	FailFast    failFast      // when a run of failures stops the worker
	LogLimit    int64         // keep at most this many bytes of each log; 0: all
	Lease       time.Duration // each job's lease
	MetricsAddr string        // serve Prometheus metrics at HOST:PORT; "": none
}

func defineWork(fs *pflag.FlagSet) runFunc {
	var opts workOptions
	var kinds kindsFlag
	fs.Var(&kinds, "kind", "take only jobs of kind `K` (repeatable)")
	fs.IntVar(&opts.Parallel, "parallel", 1, "run up to `N` jobs at a time")
	fs.DurationVar(&opts.Grace, "grace", defaultGrace, "time between SIGTERM and SIGKILL when a command is stopped")
	fs.BoolVar(&opts.UntilEmpty, "until-empty", false, "exit once no job is due and no command runs")
	fs.BoolVar(&opts.JSON, "json", false, "print one JSON object per line (shape in docs/cli.md)")
	fs.DurationVar(&opts.Scan, "scan", jobstore.DefaultScanInterval, "look at ROOT this often even without file system events, and rescue jobs whose worker is gone")
	fs.IntVar(&opts.FailFast.after, "fail-fast", defaultFailFast, "stop after `N` jobs in a row fail fast the same way (0: never)")
	fs.DurationVar(&opts.FailFast.within, "fail-fast-within", defaultFailFastWithin, "a job whose command fails within `D` of its start fails fast")
	logLimit := sizeFlag(defaultLogLimit)
	fs.Var(&logLimit, "log-limit", "keep at most the last `SIZE` bytes of stdout.log and of stderr.log (0: all; units KiB, MiB, GiB)")
	fs.DurationVar(&opts.Lease, "lease", jobstore.DefaultLease, "each job's lease: another host may take over a job whose worker has not renewed it for this long")
	fs.StringVar(&opts.MetricsAddr, "metrics", "", "serve this worker's Prometheus metrics at http://`HOST:PORT`/metrics (port 0: a free one)")
	return func(e *env, args, pos []string) error {
		_, argv, dashed := splitCommand(args)
		switch {
		case !dashed || len(argv) == 0:
			return remedy.Usagef("missing -- COMMAND: the command to run for each job comes after --")
		case opts.Parallel < 1:
			return remedy.Usagef("%s must be at least 1, got %d", flagSpelling(args, "parallel"), opts.Parallel)
		case opts.FailFast.after < 0:
			return remedy.Usagef("%s must be 0 (never) or more, got %d", flagSpelling(args, "fail-fast"), opts.FailFast.after)
		case logLimit != 0 && logLimit < minLogLimit:
			return remedy.Usagef("%s must be 0 (keep all) or at least %d, got %d", flagSpelling(args, "log-limit"), minLogLimit, logLimit)
		}
		for _, d := range []struct {
			flag string
			d    time.Duration
		}{{"fail-fast-within", opts.FailFast.within}, {"grace", opts.Grace}, {"scan", opts.Scan}, {"lease", opts.Lease}} {
			if err := positiveDuration(flagSpelling(args, d.flag), d.d); err != nil {
				return err
			}
		}
		opts.Root, opts.Argv, opts.Kinds, opts.LogLimit = pos[0], argv, kinds, int64(logLimit)
		return runWork(e, opts)
	}
}

// runWork runs opts.Argv for each job under opts.Root that it claims, up
// to opts.Parallel at a time, until a stop signal arrives (or, with
// opts.UntilEmpty, until no job is due), and prints a line per start and
// end; a command that cannot run jobs stops it with exitBroken.
func runWork(e *env, opts workOptions) error {
	argv, kinds := opts.Argv, opts.Kinds
	warnKindTypos(e.stderr, opts.Root, kinds)
	if _, err := exec.LookPath(argv[0]); err != nil {
		return remedy.WithCLIRemedy(fmt.Errorf("jobstore work: cannot run %s: %w", argv[0], err),
			"give a command that exists on this host (a path, or a name found in PATH)")
	}
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return err
	}
	wk := &worker{root: root, argv: argv, grace: opts.Grace, asJSON: opts.JSON, out: e.stdout, stderr: e.stderr, stop: newWorkStop(),
		logLimit: opts.LogLimit, failFast: opts.FailFast}
	if opts.MetricsAddr != "" {
		wk.metrics = newWorkMetrics(kinds)
		bound, stop, err := serveWorkMetrics(wk.metrics, opts.MetricsAddr)
		if err != nil {
			return err
		}
		defer stop()
		wk.warnf("metrics at http://%s/metrics", bound)
	}
	start := []jobstore.StartOption{jobstore.WithKinds(kinds...), jobstore.WithScanInterval(opts.Scan), jobstore.WithLease(opts.Lease),
		jobstore.WithSkipped(func(dir jobstore.JobDir, err error) {
			wk.warnf("passed over job %s: %s", dir.ID(), termtext.OneLine(remedy.ErrorLine(err)))
		})}
	return wk.loop(opts.Parallel, opts.UntilEmpty, start)
}

// drainForever is the Worker's grace: after the first interrupt the
// running commands run to their end; only a second interrupt stops them
// (StopAndCancel). --grace is the time between SIGTERM and SIGKILL of a
// command, something else.
const drainForever = time.Duration(math.MaxInt64)

// loop runs the jobs of the root on a jobstore.Worker, parallel at a time,
// until it is told to stop (a signal, a command that cannot run jobs, or
// --until-empty and nothing left), then waits for the running ones.
func (wk *worker) loop(parallel int, untilEmpty bool, opts []jobstore.StartOption) error {
	taking, stopTaking := context.WithCancel(context.Background())
	defer stopTaking()
	wk.stopTaking = stopTaking
	wopts := []jobstore.WorkerOption{jobstore.WithParallel(parallel), jobstore.WithGrace(drainForever),
		jobstore.WithStartOptions(opts...), jobstore.WithTakeGate(wk.gate), jobstore.WithLogger(wk.logger())}
	if untilEmpty {
		wopts = append(wopts, jobstore.WithUntilIdle())
	}
	w, err := jobstore.NewWorker(wk.root, wk.handle, wopts...)
	if err != nil {
		return err
	}
	sigs := make(chan os.Signal, 2)
	for _, sig := range stopSignals() {
		if !signal.Ignored(sig) { // a background job of a shell ignores SIGINT: so does the worker
			signal.Notify(sigs, sig)
		}
	}
	defer signal.Stop(sigs)
	wk.stop.force = func() {
		stopTaking()
		w.StopAndCancel()
	}
	go func() {
		sig, ok := <-sigs
		if !ok {
			return
		}
		if wk.stop.signalled(sig) {
			wk.mu.Lock()
			n := wk.active
			wk.mu.Unlock()
			wk.warnf("%s", stopNote(sig, n))
			stopTaking()
			if sig, ok = <-sigs; !ok {
				return
			}
		}
		wk.warnf("%s: stopping the running jobs; they are queued again", signalName(sig))
		wk.stop.forced()
	}()

	fatal := w.Run(taking)
	sig := wk.stop.signal()
	wk.mu.Lock()
	defer wk.mu.Unlock()
	switch {
	case fatal != nil:
	case wk.broken != nil:
		fatal = wk.broken
	case wk.failed:
		fatal = &exitError{code: exitRuntime}
	case sig != nil:
		fatal = &stopped{sig} // the process ends as the signal ends one (stop.go)
	case untilEmpty && wk.unsuccessful:
		fatal = &exitError{code: exitUnsuccessful} // each end line said how
	}
	return fatal
}

// stopNote is what the worker says when sig stops it taking jobs while n
// of its jobs run: what it waits for, and what a second signal does.
func stopNote(sig os.Signal, n int) string {
	head := signalName(sig) + ": taking no more jobs; "
	switch n {
	case 0:
		return head + "no job is running: the worker ends"
	case 1:
		return head + "waiting for the running job to end (interrupt again to stop it: it is queued again)"
	}
	return head + fmt.Sprintf("waiting for %d running jobs to end (interrupt again to stop them: they are queued again)", n)
}

// gate is the Worker's take gate: the next job is taken only once the
// command of the job taken before has started (or its job has ended
// without it), so that a command that cannot be started fails one job,
// never one per slot. A command judged broken has stopped the taking
// (wk.stopTaking) by then. The Worker calls it once per job it takes (and
// once more before a last take that finds none): each call but the first
// follows the take of the job whose channel the call before queued.
func (wk *worker) gate(ctx context.Context) error {
	wk.mu.Lock()
	var before chan struct{}
	if n := len(wk.launches); n > 0 {
		before = wk.launches[n-1] // the job taken last, whose handler may not have begun
	} else {
		before = wk.launched
	}
	wk.launches = append(wk.launches, make(chan struct{}))
	wk.mu.Unlock()
	if before != nil {
		select {
		case <-before:
		case <-ctx.Done():
		}
	}
	return nil
}

// handle is the Worker's handler: it runs the command for run, prints the
// start and end lines and judges whether the command can run jobs. It
// returns nil once it recorded the job's end; otherwise an error, and the
// Worker records the end: the job queued again when the worker's forced
// stop interrupted it, else the outcome handle meant to record (it
// returns nil for a success).
func (wk *worker) handle(ctx context.Context, run *jobstore.Run) error {
	wk.mu.Lock()
	launched := wk.launches[0] // queued by the gate before this job was taken
	wk.launches = wk.launches[1:]
	wk.launched = launched
	wk.active++
	wk.mu.Unlock()
	var once sync.Once
	hasStarted := func() { once.Do(func() { close(launched) }) }
	defer hasStarted()

	wk.startLine(run)
	wk.metrics.started(run)
	began := time.Now()
	end := wk.runJob(ctx, run, hasStarted)
	wk.mu.Lock()
	wk.active-- // before the end line: whoever reads that line sees the count without the job
	n := wk.active
	wk.mu.Unlock()
	wk.endLine(run, end, time.Since(began))
	wk.metrics.ended(run, end)
	if stop, why := wk.judge(run, end); stop {
		if why != "" && n > 0 { // else the error that ends the worker says it at once
			wk.warnf("taking no more jobs: %s; waiting for %s to end", why, termtext.Plural(n, "running job"))
		}
		wk.stopTaking()
	}
	switch {
	case end.interrupted:
		return errors.New(end.message)
	case end.err != nil && end.state == "" && end.outcome != jobstore.Succeeded && !errors.Is(end.err, jobstore.ErrNotOwner):
		return errors.New(end.message) // the Worker tries once more to record the outcome meant
	}
	return nil // recorded; or a success not recorded, which the Worker tries once more
}

// judge takes note of how a job ended; it reports whether the worker must
// take no more jobs (its command cannot run them), and why when this job
// is what decided it.
func (wk *worker) judge(run *jobstore.Run, end jobEnd) (stop bool, why string) {
	wk.mu.Lock()
	defer wk.mu.Unlock()
	if end.err != nil && !errors.Is(end.err, jobstore.ErrNotOwner) {
		wk.failed = true
	}
	if end.state != jobstore.Succeeded {
		wk.unsuccessful = true
	}
	if wk.broken != nil {
		return true, ""
	}
	switch {
	case end.fatal:
		wk.broken = wk.cannotStart(run, end.startErr)
	case wk.streak.add(wk.failFast, end, run.Dir().ID()):
		wk.broken = wk.failsFast()
	default:
		return false, ""
	}
	return true, wk.brokenWhy()
}

// workStartJSON and workEndJSON are the lines of "work --json".
type workStartJSON struct {
	Event string `json:"event"` // start
	Time  string `json:"time"`
	ID    string `json:"job_id"`
	Dir   string `json:"dir"`
	Kind  string `json:"kind"`
}

type workEndJSON struct {
	Event    string            `json:"event"` // end
	Time     string            `json:"time"`
	ID       string            `json:"job_id"`
	Dir      string            `json:"dir"`
	State    *string           `json:"state"` // null when nothing was written
	RetryAt  *string           `json:"retry_at"`
	ExitCode *int              `json:"exit_code"`
	Signal   *string           `json:"signal"`
	Seconds  float64           `json:"seconds"`
	Message  string            `json:"message"`
	Error    *remedy.ErrorJSON `json:"error"`
}

func (wk *worker) startLine(run *jobstore.Run) {
	now := jobview.FmtTime(time.Now())
	if wk.asJSON {
		wk.printJSON(workStartJSON{Event: "start", Time: now, ID: run.Dir().ID(), Dir: string(run.Dir()), Kind: run.Spec().Kind})
		return
	}
	wk.printf("%s start %s kind %s\n", now, run.Dir().ID(), termtext.EscapeTerminal(run.Spec().Kind))
}

func (wk *worker) endLine(run *jobstore.Run, end jobEnd, took time.Duration) {
	now := jobview.FmtTime(time.Now())
	if wk.asJSON {
		ev := workEndJSON{Event: "end", Time: now, ID: run.Dir().ID(), Dir: string(run.Dir()),
			ExitCode: end.exitCode, Seconds: took.Seconds(), Message: end.message, Error: remedy.NewErrorJSON(end.err)}
		if state := end.shownState(); state != "" {
			ev.State = &state
		}
		if end.retryAt != nil {
			at := jobview.FmtTime(*end.retryAt)
			ev.RetryAt = &at
		}
		if end.signal != "" {
			ev.Signal = &end.signal
		}
		wk.printJSON(ev)
		return
	}
	var b strings.Builder
	state := end.shownState()
	if state == "" {
		state = "not-recorded"
	}
	fmt.Fprintf(&b, "%s end   %s %s", now, run.Dir().ID(), state)
	if end.exitCode != nil {
		fmt.Fprintf(&b, " exit %d", *end.exitCode)
	}
	fmt.Fprintf(&b, " after %s", jobview.FmtAge(took))
	if end.message != "" {
		b.WriteString(": " + end.message)
	}
	if end.err != nil {
		b.WriteString(" (" + remedy.ErrorLine(end.err) + ")")
	}
	wk.printf("%s\n", termtext.EscapeTerminal(termtext.OneLine(b.String())))
}

// printJSON prints v on one line, without HTML escaping.
func (wk *worker) printJSON(v any) {
	wk.mu.Lock()
	defer wk.mu.Unlock()
	enc := json.NewEncoder(wk.out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // plain strings and numbers always marshal
	}
}

func (wk *worker) printf(format string, args ...any) {
	wk.mu.Lock()
	defer wk.mu.Unlock()
	fmt.Fprintf(wk.out, format, args...)
}

// warnf prints a note about the worker itself on stderr.
func (wk *worker) warnf(format string, args ...any) {
	wk.mu.Lock()
	defer wk.mu.Unlock()
	fmt.Fprintln(wk.stderr, termtext.EscapeTerminal(termtext.OneLine("jobstore work: "+fmt.Sprintf(format, args...))))
}

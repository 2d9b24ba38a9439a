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

// kindsFlag collects --kind values.
type kindsFlag []string

func (k *kindsFlag) String() string { return strings.Join(*k, ",") }

// Type is pflag's name for the value: "value", as the usage text shows it.
func (k *kindsFlag) Type() string { return "value" }

func (k *kindsFlag) Set(v string) error {
	if v == "" {
		return errors.New("a kind cannot be empty")
	}
	*k = append(*k, v)
	return nil
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

func defineWork(fs *pflag.FlagSet) runFunc {
	var kinds kindsFlag
	fs.Var(&kinds, "kind", "take only jobs of kind `K` (repeatable)")
	parallel := fs.Int("parallel", 1, "run up to `N` jobs at a time")
	grace := fs.Duration("grace", defaultGrace, "time between SIGTERM and SIGKILL when a command is stopped")
	untilEmpty := fs.Bool("until-empty", false, "exit once no job is due and no command runs")
	asJSON := fs.Bool("json", false, "print one JSON object per line (shape in docs/cli.md)")
	scan := fs.Duration("scan", jobstore.DefaultScanInterval, "look at ROOT this often even without file system events, and rescue jobs whose worker is gone")
	failFastN := fs.Int("fail-fast", defaultFailFast, "stop after `N` jobs in a row fail fast the same way (0: never)")
	failFastWithin := fs.Duration("fail-fast-within", defaultFailFastWithin, "a job whose command fails within `D` of its start fails fast")
	logLimit := sizeFlag(defaultLogLimit)
	fs.Var(&logLimit, "log-limit", "keep at most the last `SIZE` bytes of stdout.log and of stderr.log (0: all; units KiB, MiB, GiB)")
	lease := fs.Duration("lease", jobstore.DefaultLease, "each job's lease: another host may take over a job whose worker has not renewed it for this long")
	metricsAddr := fs.String("metrics", "", "serve this worker's Prometheus metrics at http://`HOST:PORT`/metrics (port 0: a free one)")
	return func(e *env, args, pos []string) error {
		_, argv, dashed := splitCommand(args)
		switch {
		case !dashed || len(argv) == 0:
			return usagef("missing -- COMMAND: the command to run for each job comes after --")
		case *parallel < 1:
			return usagef("%s must be at least 1, got %d", flagSpelling(args, "parallel"), *parallel)
		case *failFastN < 0:
			return usagef("%s must be 0 (never) or more, got %d", flagSpelling(args, "fail-fast"), *failFastN)
		case logLimit != 0 && logLimit < minLogLimit:
			return usagef("%s must be 0 (keep all) or at least %d, got %d", flagSpelling(args, "log-limit"), minLogLimit, logLimit)
		}
		if err := positiveDuration(flagSpelling(args, "fail-fast-within"), *failFastWithin); err != nil {
			return err
		}
		if err := positiveDuration(flagSpelling(args, "grace"), *grace); err != nil {
			return err
		}
		if err := positiveDuration(flagSpelling(args, "scan"), *scan); err != nil {
			return err
		}
		if err := positiveDuration(flagSpelling(args, "lease"), *lease); err != nil {
			return err
		}
		warnKindTypos(e.stderr, pos[0], kinds)
		if _, err := exec.LookPath(argv[0]); err != nil {
			return withCLIRemedy(fmt.Errorf("jobstore work: cannot run %s: %w", argv[0], err),
				"give a command that exists on this host (a path, or a name found in PATH)")
		}
		root, err := filepath.Abs(pos[0])
		if err != nil {
			return err
		}
		wk := &worker{root: root, argv: argv, grace: *grace, asJSON: *asJSON, out: e.stdout, stderr: e.stderr, stop: newWorkStop(),
			logLimit: int64(logLimit), failFast: failFast{after: *failFastN, within: *failFastWithin}}
		if *metricsAddr != "" {
			wk.metrics = newWorkMetrics(kinds)
			bound, stop, err := serveWorkMetrics(wk.metrics, *metricsAddr)
			if err != nil {
				return err
			}
			defer stop()
			wk.warnf("metrics at http://%s/metrics", bound)
		}
		opts := []jobstore.StartOption{jobstore.WithKinds(kinds...), jobstore.WithScanInterval(*scan), jobstore.WithLease(*lease),
			jobstore.WithSkipped(func(dir jobstore.JobDir, err error) {
				wk.warnf("passed over job %s: %s", dir.ID(), oneLine(errorLine(err)))
			})}
		return wk.loop(*parallel, *untilEmpty, opts)
	}
}

// splitCommand splits args at the first "--": the worker's own arguments,
// then the command. dashed reports whether there was a "--".
func splitCommand(args []string) (own, argv []string, dashed bool) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:], true
		}
	}
	return args, nil, false
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
			wk.warnf("taking no more jobs: %s; waiting for %s to end", why, plural(n, "running job"))
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
	Event    string     `json:"event"` // end
	Time     string     `json:"time"`
	ID       string     `json:"job_id"`
	Dir      string     `json:"dir"`
	State    *string    `json:"state"` // null when nothing was written
	RetryAt  *string    `json:"retry_at"`
	ExitCode *int       `json:"exit_code"`
	Signal   *string    `json:"signal"`
	Seconds  float64    `json:"seconds"`
	Message  string     `json:"message"`
	Error    *errorJSON `json:"error"`
}

func (wk *worker) startLine(run *jobstore.Run) {
	now := fmtTime(time.Now())
	if wk.asJSON {
		wk.printJSON(workStartJSON{Event: "start", Time: now, ID: run.Dir().ID(), Dir: string(run.Dir()), Kind: run.Spec().Kind})
		return
	}
	wk.printf("%s start %s kind %s\n", now, run.Dir().ID(), escapeTerminal(run.Spec().Kind))
}

func (wk *worker) endLine(run *jobstore.Run, end jobEnd, took time.Duration) {
	now := fmtTime(time.Now())
	if wk.asJSON {
		ev := workEndJSON{Event: "end", Time: now, ID: run.Dir().ID(), Dir: string(run.Dir()),
			ExitCode: end.exitCode, Seconds: took.Seconds(), Message: end.message, Error: newErrorJSON(end.err)}
		if state := end.shownState(); state != "" {
			ev.State = &state
		}
		if end.retryAt != nil {
			at := fmtTime(*end.retryAt)
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
	fmt.Fprintf(&b, " after %s", fmtAge(took))
	if end.message != "" {
		b.WriteString(": " + end.message)
	}
	if end.err != nil {
		b.WriteString(" (" + errorLine(end.err) + ")")
	}
	wk.printf("%s\n", escapeTerminal(oneLine(b.String())))
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
	fmt.Fprintln(wk.stderr, escapeTerminal(oneLine("jobstore work: "+fmt.Sprintf(format, args...))))
}

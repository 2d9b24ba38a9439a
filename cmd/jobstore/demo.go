package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
)

func demoCmd() *command {
	return &command{
		name:    "demo",
		args:    "[ROOT] [--fail]",
		summary: "submit a job, run it, watch it, list and show it, in seconds",
		doc: `Shows the whole life of a job in about 2 seconds, in one process:

 1. submits a job under ROOT (default: a fresh temporary directory, printed
    and left in place for you to look at);
 2. runs a simulated runner that holds job.lock and reports progress per
    item, 20,000 times in 2 seconds, while a watcher follows status.json
    with Watch (file system events, a 1 s safety poll) as a GUI can, and
    draws each status as soon as it is written. Progress is coalesced:
    at most one status write per 100 ms carries the latest value, so the
    runner pays about a microsecond per call instead of a disk write.
    At the end the demo prints how many Progress calls were made and how
    many times status.json was written (its seq);
 3. lists ROOT and shows the finished job.

--fail makes the runner fail halfway, with an error and a remedy, to show how
a failure reads. The demo itself still exits 0.

Examples:
  jobstore demo
  jobstore demo /tmp/jobs --fail

Exit codes: 0 the demo ran; 2 bad arguments; 3 a record could not be
written or read.
Details: docs/cli.md#demo`,
		minPos: 0, maxPos: 1, posNames: "at most one ROOT",
		define: defineDemo,
	}
}

// The simulated job: demoFrames frames of demoTiles tiles, a Progress call
// per tile, one tile every demoTileEvery (20,000 calls in 2 s), watched with
// a safety poll of demoPollEvery. The runner keeps to that schedule by
// sleeping whenever it is ahead by a millisecond or more, so the demo
// takes about demoFrames*demoTiles*demoTileEvery whatever the timer
// resolution.
const (
	demoFrames    = 20
	demoTiles     = 1000
	demoTileEvery = 100 * time.Microsecond
	demoPollEvery = jobstore.DefaultPollInterval
)

// demoOptions are what "jobstore demo" is told: its ROOT, if given, and
// its flags.
type demoOptions struct {
	Root string // "": a fresh temporary directory
	Fail bool   // the runner fails halfway, to show a failure
}

func defineDemo(fs *pflag.FlagSet) runFunc {
	var opts demoOptions
	fs.BoolVar(&opts.Fail, "fail", false, "make the runner fail halfway, to show a failure")
	return func(e *env, args, pos []string) error {
		if len(pos) == 1 {
			opts.Root = pos[0]
		}
		return runDemo(e, opts)
	}
}

// runDemo submits a job under opts.Root (or a fresh temporary directory,
// left there), runs it in this process while a watcher draws it, and
// shows what each step wrote.
func runDemo(e *env, opts demoOptions) error {
	var root string
	var err error
	if opts.Root != "" {
		root = opts.Root
		fmt.Fprintf(e.stdout, "jobstore demo, in %s\n\n", root)
	} else {
		if root, err = os.MkdirTemp("", "jobstore-demo-"); err != nil {
			return remedy.WithCLIRemedy(&jobstore.Error{Op: "create temp dir", Err: err, Msg: "cannot create the demo's root"},
				"give a writable ROOT: jobstore demo ROOT")
		}
		fmt.Fprintf(e.stdout, "jobstore demo, in a fresh temporary directory: %s\n(it is left there for you to look at; remove it when done)\n\n", root)
	}

	params, _ := json.Marshal(map[string]int{"frames": demoFrames, "tiles_per_frame": demoTiles})
	dir, err := jobstore.Submit(root, jobstore.JobSpec{Kind: "demo.render", Params: params,
		Labels: map[string]string{"origin": "demo"}, SubmittedBy: defaultSubmitter()})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "1. submit: %s written once, status.json says queued (seq 1)\n   job %s\n\n", jobstore.SpecFile, dir.ID())

	fmt.Fprintf(e.stdout, "2. run: a runner in this process holds %s and calls Progress for each of\n"+
		"   %d tiles (%d frames), as fast as it renders them; a watcher follows status.json\n"+
		"   with Watch and draws each status as soon as it is written:\n\n", jobstore.LockFile, demoFrames*demoTiles, demoFrames)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	var calls int
	go func() {
		var err error
		calls, err = simulateRunner(dir, opts.Fail)
		if err != nil {
			cancel() // the watcher would wait for a terminal state forever
		}
		ran <- err
	}()
	final, watchErr := newWatcher(e.stdout, e.term).watch(ctx, dir, demoPollEvery)
	if err := <-ran; err != nil {
		return err
	}
	if watchErr != nil {
		return watchErr
	}
	// Every write but the first two (queued, running) and the last
	// (the outcome) carried progress.
	fmt.Fprintf(e.stdout, "\n   The runner called Progress %d times; status.json was written %d times (seq %d:\n"+
		"   queued, running, %d progress writes, %s). A write per call would have been %d writes.\n",
		calls, final.Seq, final.Seq, final.Seq-3, final.State, calls+3)

	fmt.Fprintf(e.stdout, "\n3. list %s:\n\n", root)
	entries, err := jobstore.List(root)
	if err != nil {
		return err
	}
	printTable(e, root, entries, time.Now())

	fmt.Fprintf(e.stdout, "\n4. show %s:\n\n", dir)
	j := jobview.ReadJob(dir)
	printJob(e.stdout, j)

	fmt.Fprintf(e.stdout, "\nNext (with \"go run ./cmd/jobstore\" for \"jobstore\"):\n"+
		"  jobstore show %[1]s --json\n  jobstore list %[2]s --json\n  jobstore check %[2]s\n  jobstore help\n", dir, root)
	if j.SpecInfo.Err != nil {
		return j.SpecInfo.Err
	}
	return j.StatusInfo.Err
}

// simulateRunner is what a real runner does with the runner handle: Start
// (takes job.lock, writes running), Progress for each item (coalesced: at
// most one write per DefaultProgressInterval), Finish (a durable terminal
// write carrying the last progress), Close (releases the lock). It returns
// the number of Progress calls made.
func simulateRunner(dir jobstore.JobDir, fail bool) (calls int, err error) {
	run, err := jobstore.Start(dir)
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := run.Close(); err == nil {
			err = cerr
		}
	}()
	const total = demoFrames * demoTiles
	start := time.Now()
	for f := 1; f <= demoFrames; f++ {
		if fail && f > demoFrames/2 {
			code := 2
			return calls, run.Finish(jobstore.Outcome{State: jobstore.Failed, ExitCode: &code,
				Message: fmt.Sprintf("stopped at frame %d/%d", f, demoFrames),
				Error:   fmt.Sprintf("frame %d: no space left on device (simulated)", f),
				Remedy:  "free some disk space, then submit the job again"})
		}
		for t := 1; t <= demoTiles; t++ {
			i := (f-1)*demoTiles + t
			if ahead := time.Until(start.Add(time.Duration(i) * demoTileEvery)); ahead >= time.Millisecond {
				time.Sleep(ahead)
			}
			if err := run.Progress(float64(i)/total, fmt.Sprintf("frame %d/%d, tile %d/%d", f, demoFrames, t, demoTiles)); err != nil {
				return calls, err
			}
			calls++
		}
	}
	code := 0
	return calls, run.Finish(jobstore.Outcome{State: jobstore.Succeeded, ExitCode: &code,
		Message: fmt.Sprintf("rendered %d frames", demoFrames)})
}

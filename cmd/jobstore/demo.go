package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/axqua/jobstore"
)

func demoCmd() *command {
	return &command{
		name:    "demo",
		args:    "[ROOT] [--fail]",
		summary: "submit a job, run it and watch it in this process, then list and show it",
		doc: `Shows the whole life of a job in about 4 seconds, in one process:

 1. submits a job under ROOT (default: a fresh temporary directory, printed
    and left in place for you to look at);
 2. runs a simulated runner that holds job.lock and reports progress 10 times
    a second for 3 seconds, while a watcher polls status.json once a second
    with ReadStatus, exactly as a GUI would, and draws a progress line;
 3. lists ROOT and shows the finished job.

--fail makes the runner fail halfway, with an error and a remedy, to show how
a failure reads. The demo itself still exits 0.

Exit codes: 0 the demo ran; 2 bad arguments; 3 a record could not be
written or read.`,
		run: runDemo,
	}
}

// The simulated job: demoSteps progress updates, demoStepEvery apart (10 Hz
// for 3 s), watched every demoPollEvery (1 Hz, as a GUI polls). The demo
// takes demoSteps*demoStepEvery plus at most one poll: about 4 s.
const (
	demoSteps     = 30
	demoStepEvery = 100 * time.Millisecond
	demoPollEvery = time.Second
)

func runDemo(e *env, fs *flag.FlagSet, args []string) error {
	fail := fs.Bool("fail", false, "make the runner fail halfway, to show a failure")
	pos, err := parseArgs(fs, args, 0, 1, "at most one ROOT")
	if err != nil {
		return err
	}
	var root string
	if len(pos) == 1 {
		root = pos[0]
		fmt.Fprintf(e.stdout, "jobstore demo, in %s\n\n", root)
	} else {
		if root, err = os.MkdirTemp("", "jobstore-demo-"); err != nil {
			return &jobstore.Error{Op: "create temp dir", Err: err, Msg: "cannot create the demo's root",
				Remedy: "give a writable ROOT: jobstore demo ROOT"}
		}
		fmt.Fprintf(e.stdout, "jobstore demo, in a fresh temporary directory: %s\n(it is left there for you to look at; remove it when done)\n\n", root)
	}

	params, _ := json.Marshal(map[string]int{"frames": demoSteps})
	dir, err := jobstore.Submit(root, jobstore.JobSpec{Kind: "demo.render", Params: params,
		Labels: map[string]string{"origin": "demo"}, SubmittedBy: defaultSubmitter()})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "1. submit: %s written once, status.json says queued (seq 1)\n   job %s\n\n", jobstore.SpecFile, dir.ID())

	fmt.Fprintf(e.stdout, "2. run: a runner in this process holds %s and reports progress 10 times a second;\n"+
		"   a watcher reads status.json once a second, as a GUI would:\n\n", jobstore.LockFile)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() {
		err := simulateRunner(dir, *fail)
		if err != nil {
			cancel() // the watcher would wait for a terminal state forever
		}
		ran <- err
	}()
	_, watchErr := newWatcher(e.stdout, e.width).watch(ctx, dir, demoPollEvery)
	if err := <-ran; err != nil {
		return err
	}
	if watchErr != nil {
		return watchErr
	}

	fmt.Fprintf(e.stdout, "\n3. list %s:\n\n", root)
	entries, err := jobstore.List(root)
	if err != nil {
		return err
	}
	printTable(e, root, entries, time.Now())

	fmt.Fprintf(e.stdout, "\n4. show %s:\n\n", dir)
	j := readJob(dir)
	printJob(e.stdout, j)

	fmt.Fprintf(e.stdout, "\nNext (with \"go run ./cmd/jobstore\" for \"jobstore\"):\n"+
		"  jobstore show %[1]s --json\n  jobstore list %[2]s --json\n  jobstore check %[2]s\n  jobstore help\n", dir, root)
	if j.SpecInfo.Err != nil {
		return j.SpecInfo.Err
	}
	return j.StatusInfo.Err
}

// simulateRunner is what a real runner does with the runner handle: Start
// (takes job.lock, writes running), Progress (NoSync, seq+1), Finish (a
// durable terminal write), Close (releases the lock).
func simulateRunner(dir jobstore.JobDir, fail bool) (err error) {
	run, err := jobstore.Start(dir, jobstore.WithProgressInterval(0)) // one write per step, as the demo counts them
	if err != nil {
		return err
	}
	defer func() {
		if cerr := run.Close(); err == nil {
			err = cerr
		}
	}()
	tick := time.NewTicker(demoStepEvery)
	defer tick.Stop()
	for i := 1; i <= demoSteps; i++ {
		<-tick.C
		if fail && i > demoSteps/2 {
			code := 2
			return run.Finish(jobstore.Outcome{State: jobstore.Failed, ExitCode: &code,
				Message: fmt.Sprintf("stopped at frame %d/%d", i, demoSteps),
				Error:   fmt.Sprintf("frame %d: no space left on device (simulated)", i),
				Remedy:  "free some disk space, then submit the job again"})
		}
		if err := run.Progress(float64(i)/demoSteps, fmt.Sprintf("frame %d/%d", i, demoSteps)); err != nil {
			return err
		}
	}
	code := 0
	return run.Finish(jobstore.Outcome{State: jobstore.Succeeded, ExitCode: &code,
		Message: fmt.Sprintf("rendered %d frames", demoSteps)})
}

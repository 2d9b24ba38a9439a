package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/axqua/jobstore"
)

// Jobs submitted, run by a worker, waited for by a poller; then a runner
// that died is found by the supervisor's ReconcileAll.
func Example_runner() {
	tmp, err := os.MkdirTemp("", "jobstore-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "jobs")

	// Submit writes job.json (once: a taken ID is ErrExists) and
	// status.json, queued, seq 1; the job appears whole or not at all.
	for _, id := range []string{"render-1", "render-2"} {
		spec := jobstore.JobSpec{ID: id, Kind: "render", Params: []byte(`{"frames": 3}`)}
		if _, err := jobstore.Submit(root, spec); err != nil {
			log.Fatal(err)
		}
	}

	// A worker, on any number of hosts sharing root: StartNext starts the
	// oldest queued job (exactly one worker gets each) and waits for one
	// while there is none. Here ctx is done, so it looks once.
	ctx, stop := context.WithCancel(context.Background())
	stop()
	for {
		run, err := jobstore.StartNext(ctx, root, jobstore.WithKinds("render"))
		if errors.Is(err, context.Canceled) {
			break // nothing left to start
		} else if err != nil {
			log.Fatal(err)
		}
		for i := 1; i <= 3; i++ {
			// Kept in memory; at most one write per 100 ms carries the latest.
			if err := run.Progress(float64(i)/3, fmt.Sprintf("frame %d/3", i)); err != nil {
				log.Fatal(err)
			}
		}
		// Atomic and durable: once Finish returns nil, a power cut keeps it.
		if err := run.Finish(jobstore.Outcome{State: jobstore.Succeeded, Message: "3 frames"}); err != nil {
			log.Fatal(err)
		}
		if err := run.Close(); err != nil {
			log.Fatal(err)
		}
	}

	// A poller, in any process: ReadStatus never sees a torn file (nil:
	// nothing has run yet); Wait returns once the job has ended.
	st, err := jobstore.Wait(context.Background(), jobstore.JobDir(filepath.Join(root, "render-2")))
	if err != nil { // ErrNotJob, ErrNewerSchema, ...
		log.Fatal(err)
	}
	fmt.Println("render-2", st.State, st.Message, *st.Progress) // the last progress is kept

	// A runner that dies leaves "running" (here: Close without Finish).
	// The supervisor of the root runs ReconcileAll when it starts and then
	// every few minutes; it marks such jobs lost.
	dir3, err := jobstore.Submit(root, jobstore.JobSpec{ID: "render-3", Kind: "render"})
	if err != nil {
		log.Fatal(err)
	}
	run3, err := jobstore.Start(dir3) // ErrLocked if another runner has it
	if err != nil {
		log.Fatal(err)
	}
	if err := run3.Close(); err != nil {
		log.Fatal(err)
	}
	results, err := jobstore.ReconcileAll(root)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		fmt.Println(r.Dir.ID(), "marked lost:", r.Changed, "error:", r.Err)
	}
	// Output:
	// render-2 succeeded 3 frames 1
	// render-1 marked lost: false error: <nil>
	// render-2 marked lost: false error: <nil>
	// render-3 marked lost: true error: <nil>
}

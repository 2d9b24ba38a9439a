package jobstore_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/axqua/jobstore"
)

// A job submitted, run by a runner, read by a poller; then a runner that
// died is found by the supervisor's ReconcileAll.
func Example_runner() {
	tmp, err := os.MkdirTemp("", "jobstore-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "jobs")

	// Submit writes job.json once (a taken ID is ErrExists),
	// then status.json: queued, seq 1.
	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "render-1", Kind: "render",
		Params: []byte(`{"frames": 3}`)})
	if err != nil {
		log.Fatal(err)
	}

	// The runner: Start takes job.lock (ErrLocked if another runner has it)
	// and writes running. Check its error before deferring Close.
	run, err := jobstore.Start(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer run.Close()
	for i := 1; i <= 3; i++ {
		// Kept in memory; at most one write per 100 ms carries the latest.
		if err := run.Progress(float64(i)/3, fmt.Sprintf("frame %d/3", i)); err != nil {
			log.Fatal(err)
		}
	}
	if err := run.Flush(); err != nil { // write the latest now
		log.Fatal(err)
	}

	// A poller, in any process, about once a second: never a torn file.
	st, err := jobstore.ReadStatus(dir)
	switch {
	case err != nil: // ErrNotJob, ErrCorrupt, ErrNewerSchema, ...
		log.Fatal(err)
	case st == nil:
		fmt.Println("nothing has run yet")
	default:
		fmt.Println(st.State, st.Message) // seq counts writes, not calls
	}

	// Atomic and durable: once Finish returns nil, a power cut keeps it.
	if err := run.Finish(jobstore.Outcome{State: jobstore.Succeeded, Message: "3 frames"}); err != nil {
		log.Fatal(err)
	}

	// A runner that dies leaves "running" with job.lock free (here: Close
	// without Finish). The supervisor of the root runs ReconcileAll when it
	// starts and then every few minutes; it marks such jobs lost.
	dir2, err := jobstore.Submit(root, jobstore.JobSpec{ID: "render-2", Kind: "render"})
	if err != nil {
		log.Fatal(err)
	}
	run2, err := jobstore.Start(dir2)
	if err != nil {
		log.Fatal(err)
	}
	if err := run2.Close(); err != nil {
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
	// running frame 3/3
	// render-1 marked lost: false error: <nil>
	// render-2 marked lost: true error: <nil>
}

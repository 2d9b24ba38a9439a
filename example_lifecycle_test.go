package jobstore_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/axqua/jobstore"
)

// A job's life: submitted (queued), started by a runner (running), updated,
// finished; a poller lists it meanwhile.
func Example_lifecycle() {
	tmp, err := os.MkdirTemp("", "jobstore-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "jobs")

	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "render-1", Kind: "render"})
	if err != nil {
		panic(err)
	}
	run, err := jobstore.Start(dir) // holds job.lock until Close
	if err != nil {
		panic(err)
	}
	defer run.Close()
	_ = run.Progress(0.5, "frame 50 of 100") // recorded; written within 100 ms
	_ = run.Flush()                          // written now

	_, err = jobstore.Start(dir)
	fmt.Println("second start locked:", errors.Is(err, jobstore.ErrLocked))

	entries, _ := jobstore.List(root)
	for _, e := range entries {
		fmt.Println(e.Dir.ID(), e.Status.State, *e.Status.Progress, e.Status.Message, "seq", e.Status.Seq)
	}

	_ = run.Finish(jobstore.Outcome{State: jobstore.Succeeded, Message: "100 frames"})
	st, _ := jobstore.ReadStatus(dir)
	fmt.Println(st.State, st.Message, "seq", st.Seq)
	// Output:
	// second start locked: true
	// render-1 running 0.5 frame 50 of 100 seq 3
	// succeeded 100 frames seq 4
}

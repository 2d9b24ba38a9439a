package jobstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/axqua/jobstore"
)

// A runner reports progress at whatever rate suits it; a watcher follows the
// job until it ends. The watcher may skip statuses (the latest wins) but
// sees them in order, and the last one it sees is the terminal one.
func ExampleWatch() {
	tmp, err := os.MkdirTemp("", "jobstore-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(tmp)
	dir, err := jobstore.Submit(filepath.Join(tmp, "jobs"), jobstore.JobSpec{ID: "render-1", Kind: "render"})
	if err != nil {
		panic(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	updates, err := jobstore.Watch(ctx, dir)
	if err != nil {
		panic(err)
	}
	first := <-updates
	fmt.Println("first:", first.Status.State, "seq", first.Status.Seq)

	go func() {
		run, err := jobstore.Start(dir) // progress coalesced: at most 10 writes a second
		if err != nil {
			panic(err)
		}
		defer run.Close()
		for frame := 1; frame <= 100_000; frame++ {
			_ = run.Progress(float64(frame)/100_000, "rendering")
		}
		_ = run.Finish(jobstore.Outcome{State: jobstore.Succeeded, Message: "100000 frames"})
	}()

	var last *jobstore.JobStatus
	for u := range updates { // closed after the terminal status
		if u.Err != nil {
			fmt.Println("error:", u.Err)
			continue
		}
		last = u.Status
	}
	fmt.Println("last:", last.State, *last.Progress, last.Message)
	// Output:
	// first: queued seq 1
	// last: succeeded 1 100000 frames
}

package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/axqua/jobstore"
)

// A job submitted and run by a Worker: its first attempt fails and is
// retried after its backoff; the Worker stops on SIGINT or SIGTERM.
func Example_worker() {
	root, err := os.MkdirTemp("", "jobs-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)

	// Submit writes job.json (once) and a queued status.json. Up to 3
	// attempts; a retry waits about Backoff (doubling); none starts
	// before NotBefore (here: 20 ms from now).
	_, err = jobstore.Submit(root, jobstore.JobSpec{ID: "render-1", Kind: "render",
		Params: []byte(`{"frames": 3}`), MaxAttempts: 3, Backoff: 10 * time.Millisecond,
		NotBefore: time.Now().Add(20 * time.Millisecond)})
	if err != nil {
		log.Fatal(err)
	}

	// The Worker runs until SIGINT or SIGTERM, or here until render-1 is
	// done: Run returns once its handlers have returned.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	w, err := jobstore.NewWorker(root, func(ctx context.Context, run *jobstore.Run) error {
		if run.Status().Attempt == 1 {
			return errors.New("network down") // attempt 1 failed: retried
		}
		defer stop()
		for i := 1; i <= 3; i++ { // at most one write per 100 ms carries the latest
			if err := run.Progress(float64(i)/3, fmt.Sprintf("frame %d/3", i)); err != nil {
				return err
			}
		}
		return nil // succeeded, durably
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Run(ctx); err != nil {
		log.Fatal(err)
	}

	// Any process can read a status; it is never torn.
	st, err := jobstore.ReadStatus(jobstore.JobDir(filepath.Join(root, "render-1")))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.State, st.Message)
	for _, a := range st.Attempts {
		fmt.Println("attempt", a.Attempt, a.State, a.Error)
	}
	// Output:
	// succeeded frame 3/3
	// attempt 1 failed network down
	// attempt 2 succeeded
}

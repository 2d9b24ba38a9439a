package jobstore_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync"

	"github.com/axqua/jobstore"
)

// A Worker runs each job of a root with a handler: nil ends a job
// succeeded, an error fails its attempt, which is retried while the job
// has attempts left.
func ExampleWorker() {
	root, err := os.MkdirTemp("", "jobs")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	for _, frames := range []int{24, 0} {
		params, _ := json.Marshal(map[string]int{"frames": frames})
		if _, err := jobstore.Submit(root, jobstore.JobSpec{ID: fmt.Sprint("render-", frames), Kind: "render", Params: params}); err != nil {
			log.Fatal(err)
		}
	}

	ctx, stop := context.WithCancel(context.Background())
	var left sync.WaitGroup
	left.Add(2)
	w, err := jobstore.NewWorker(root, func(ctx context.Context, run *jobstore.Run) error {
		defer left.Done()
		var p struct{ Frames int }
		if err := json.Unmarshal(run.Spec().Params, &p); err != nil {
			return err
		}
		if p.Frames == 0 {
			return errors.New("nothing to render")
		}
		return run.Progress(1, fmt.Sprintf("%d frames", p.Frames))
	}, jobstore.WithParallel(2))
	if err != nil {
		log.Fatal(err)
	}
	go func() { left.Wait(); stop() }()
	if err := w.Run(ctx); err != nil { // returns once ctx is done and its handlers have returned
		log.Fatal(err)
	}

	for _, id := range []string{"render-24", "render-0"} {
		st, err := jobstore.ReadStatus(jobstore.JobDir(filepath.Join(root, id)))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s (%s)\n", id, st.State, cmp.Or(st.Error, st.Message))
	}
	// Output:
	// render-24: succeeded (24 frames)
	// render-0: failed (nothing to render)
}

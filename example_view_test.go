package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/axqua/jobstore"
)

// A View keeps what its StartNext calls learn of a root from one call to
// the next, for a loop that takes jobs without a Worker; Close ends it.
func ExampleOpenView() {
	root, err := os.MkdirTemp("", "jobs")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	for _, id := range []string{"resize-1", "resize-2"} {
		if _, err := jobstore.Submit(root, jobstore.JobSpec{ID: id, Kind: "resize"}); err != nil {
			log.Fatal(err)
		}
	}

	v, err := jobstore.OpenView(root)
	if err != nil {
		log.Fatal(err)
	}
	defer v.Close() // its watch, scan and goroutines end with it
	looked, stop := context.WithCancel(context.Background())
	stop() // look once per call: return when nothing is startable
	for {
		run, err := v.StartNext(looked, jobstore.WithKinds("resize"))
		if errors.Is(err, context.Canceled) {
			break // none left
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("started", run.Dir().ID())
		if err := run.Finish(jobstore.Outcome{State: jobstore.Succeeded}); err != nil {
			log.Fatal(err)
		}
		run.Close()
	}
	// Output:
	// started resize-1
	// started resize-2
}

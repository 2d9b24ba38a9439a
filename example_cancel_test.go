package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/axqua/jobstore"
)

// A runner passes its Run's Context to the work; another process (a GUI,
// "jobstore cancel") asks the job to stop with RequestCancel, and the
// context is done with the request as its cause.
func ExampleRun_Context() {
	tmp, err := os.MkdirTemp("", "jobstore-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(tmp)
	dir, err := jobstore.Submit(filepath.Join(tmp, "jobs"), jobstore.JobSpec{ID: "render-1", Kind: "render"})
	if err != nil {
		panic(err)
	}
	run, err := jobstore.Start(dir)
	if err != nil {
		panic(err)
	}
	defer run.Close()
	ctx := run.Context()

	// Elsewhere, in any process:
	_ = jobstore.RequestCancel(dir, jobstore.CancelRequest{RequestedBy: "alice", Reason: "wrong input"})

	<-ctx.Done() // the work stops here
	fmt.Println("cancel requested:", errors.Is(context.Cause(ctx), jobstore.ErrCancelRequested))
	_ = run.Finish(jobstore.Outcome{State: jobstore.Cancelled})
	st, _ := jobstore.ReadStatus(dir)
	req, _ := jobstore.ReadCancel(dir)
	fmt.Println(st.State, "by", req.RequestedBy+":", req.Reason)
	// Output:
	// cancel requested: true
	// cancelled by alice: wrong input
}

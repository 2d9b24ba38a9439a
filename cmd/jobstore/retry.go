package main

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

func retryCmd() *command {
	return &command{
		name:    "retry",
		args:    "DIR",
		summary: "give a failed, lost or cancelled job one more attempt",
		doc: `Queues the job in DIR (ROOT/ID) again (Retry), if it ended failed, lost or
cancelled: its status becomes queued, due at once, with its last attempt's
outcome kept in its attempts (shown by 'jobstore show'); a cancelled job's
cancel.json is deleted. A worker then runs it once more. That attempt
counts as one of the job's --max-attempts: a job retried after its last
attempt gets exactly one more, and one retried earlier goes on with its
retry policy.

Examples:
  jobstore retry /srv/jobs/$ID
  jobstore retry /srv/jobs/$ID && jobstore wait /srv/jobs/$ID

A job that is queued (it has yet to run, or a retry of it is pending),
running or succeeded is refused, and nothing is written. Of two retries of
one job at once, on any hosts, one acts; the other is refused.

Prints what happened, e.g.:

  job ID is queued again after attempt 2 (failed); a worker runs it next

Exit codes: 0 queued again; 1 refused: the job is queued, running or
succeeded (nothing written); 2 bad arguments; 3 DIR is not a job, a record
could not be read or written, or another process holds the job right now.
Details: docs/cli.md#retry`,
		minPos: 1, maxPos: 1, posNames: "DIR",
		define: defineRetry,
	}
}

// retryOptions are what "jobstore retry" is told: DIR.
type retryOptions struct {
	Dir jobstore.JobDir
}

func defineRetry(fs *pflag.FlagSet) runFunc {
	var opts retryOptions
	return func(e *env, args, pos []string) error {
		opts.Dir = jobstore.JobDir(pos[0])
		return runRetry(e, opts)
	}
}

// runRetry queues opts.Dir's job again and says after which attempt; a
// job that cannot be retried (queued, running, succeeded) is refused with
// exitUnsuccessful and why, on e.stderr.
func runRetry(e *env, opts retryOptions) error {
	dir := opts.Dir
	if err := jobstore.Retry(dir); err != nil {
		if errors.Is(err, jobstore.ErrWrongState) {
			fmt.Fprintln(e.stderr, termtext.EscapeTerminal(termtext.OneLine("jobstore retry: "+refusal(dir))))
			return &exitError{code: exitUnsuccessful}
		}
		return remedy.JobDirArgument(err, string(dir))
	}
	st, err := jobstore.ReadStatus(dir)
	if err != nil || st == nil {
		fmt.Fprintf(e.stdout, "job %s is queued again; a worker runs it next\n", dir.ID())
		return nil
	}
	last := "its last attempt"
	if all := jobview.NumberedAttempts(st); len(all) > 0 && all[len(all)-1].Ended != nil {
		a := all[len(all)-1]
		last = fmt.Sprintf("%s (%s)", a.Label, a.Ended.State)
	}
	fmt.Fprintf(e.stdout, "job %s is queued again after %s; a worker runs it next\n", dir.ID(), last)
	return nil
}

// refusal says, in the command line's words, why the job in dir cannot be
// retried, and what to do instead.
func refusal(dir jobstore.JobDir) string {
	st, err := jobstore.ReadStatus(dir)
	id := dir.ID()
	switch {
	case err != nil:
		return fmt.Sprintf("job %s cannot be retried: %s", id, remedy.ErrorLine(err))
	case st == nil:
		return fmt.Sprintf("job %s has not run yet: nothing to retry. Remedy: a worker runs it when it takes it ('jobstore work')", id)
	case st.State == jobstore.Queued && st.RetryAt != nil:
		return fmt.Sprintf("job %s is queued already: a retry is due at %s. Remedy: a worker runs it then; nothing to do", id, jobview.FmtTime(*st.RetryAt))
	case st.State == jobstore.Queued:
		return fmt.Sprintf("job %s is queued already: it has yet to run. Remedy: a worker runs it when it takes it ('jobstore work')", id)
	case st.State == jobstore.Running:
		return fmt.Sprintf("job %s is running (pid %d on %s): nothing to retry yet. Remedy: wait for it to end ('jobstore wait %s'); a failed attempt is retried by its --max-attempts", id, st.PID, st.Host, dir)
	case st.State == jobstore.Succeeded:
		return fmt.Sprintf("job %s succeeded: nothing to retry. Remedy: submit a new job to run this work again", id)
	}
	return fmt.Sprintf("job %s is %s: it cannot be retried. Remedy: run 'jobstore show %s'", id, st.State, dir)
}

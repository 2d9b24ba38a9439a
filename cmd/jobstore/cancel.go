package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

func cancelCmd() *command {
	return &command{
		name:    "cancel",
		args:    "DIR [--reason TEXT] [--by NAME]",
		summary: "ask a job to stop: writes DIR/cancel.json once",
		doc: `Asks the job in DIR (ROOT/ID) to stop (RequestCancel): DIR/cancel.json is
published once, atomically, naming who asked (--by, default this user and
host) and why (--reason). The first request stands: a second one changes
nothing and says so.

Examples:
  jobstore cancel /srv/jobs/$ID --reason "wrong input"
  jobstore cancel /srv/jobs/$ID --by "nightly cleanup"

A queued job is marked cancelled at once (unless a runner is starting it
right now: then its start refuses the job). A running job's runner is told
through its Run.Context and ends the job cancelled; if it finishes first,
its outcome stands. If the runner is gone, "jobstore reconcile" marks the
job cancelled.

Prints what happened, e.g.:

  cancel requested for job ID by "alice on host1", reason "wrong input"
  job ID is cancelled

Exit codes: 0 requested, or already requested; 1 the job had already ended
(nothing written); 2 bad arguments; 3 DIR is not a job, or a record could
not be read or written.
Details: docs/cli.md#cancel`,
		minPos: 1, maxPos: 1, posNames: "DIR",
		define: defineCancel,
	}
}

// cancelOptions are what "jobstore cancel" is told: DIR and its flags.
type cancelOptions struct {
	Dir    jobstore.JobDir
	Reason string // why the job should stop
	By     string // who asks; "": USER on HOST
}

func defineCancel(fs *pflag.FlagSet) runFunc {
	var opts cancelOptions
	fs.StringVar(&opts.Reason, "reason", "", "why the job should stop (shown in its status)")
	fs.StringVar(&opts.By, "by", "", `who asks (default "USER on HOST")`)
	return func(e *env, args, pos []string) error {
		opts.Dir = jobview.JobDirArg(pos[0])
		return runCancel(e, opts)
	}
}

// runCancel asks opts.Dir's job to stop and says what becomes of it; a
// job that has ended already is refused with exitUnsuccessful, on
// e.stderr.
func runCancel(e *env, opts cancelOptions) error {
	dir := opts.Dir
	req := jobstore.CancelRequest{RequestedAt: jobstore.Now(), RequestedBy: opts.By, Reason: opts.Reason}
	if req.RequestedBy == "" {
		req.RequestedBy = jobview.Requester()
	}
	if err := jobstore.RequestCancel(dir, req); err != nil {
		if errors.Is(err, jobstore.ErrWrongState) {
			fmt.Fprintln(e.stderr, termtext.EscapeTerminal(termtext.OneLine(remedy.ErrorLine(remedy.WithCLIRemedy(err, "nothing to cancel: the job has ended ('jobstore show "+string(dir)+"' says how)")))))
			return &exitError{code: exitUnsuccessful}
		}
		if errors.Is(err, os.ErrPermission) {
			return remedy.WithCLIRemedy(err, cancelPermissionRemedy(dir))
		}
		return remedy.JobDirArgument(err, string(dir))
	}
	stands, err := jobstore.ReadCancel(dir)
	if err != nil {
		// Published (or found) but unreadable: the request holds all the same.
		fmt.Fprintf(e.stdout, "job %s already has a cancel request, which cannot be read: %s\n", dir.ID(), termtext.OneLine(remedy.ErrorLine(err)))
		return nil
	}
	if stands != nil && stands.RequestedAt.Equal(req.RequestedAt) && stands.RequestedBy == req.RequestedBy && stands.Reason == req.Reason {
		fmt.Fprintf(e.stdout, "cancel requested for job %s %s\n", dir.ID(), jobview.RequestText(stands))
	} else if stands != nil {
		fmt.Fprintf(e.stdout, "cancel already requested for job %s %s; this request changed nothing\n", dir.ID(), jobview.RequestText(stands))
	}
	st, err := jobstore.ReadStatus(dir)
	switch {
	case err != nil:
		return err
	case st == nil || st.State == jobstore.Queued:
		fmt.Fprintf(e.stdout, "job %s is queued; a runner that starts it will refuse it and mark it cancelled\n", dir.ID())
	case st.State == jobstore.Running:
		fmt.Fprintf(e.stdout, "job %s is running (pid %d on %s): its runner has been asked to stop\n", dir.ID(), st.PID, st.Host)
	case st.State == jobstore.Cancelled:
		fmt.Fprintf(e.stdout, "job %s is cancelled\n", dir.ID())
	default:
		fmt.Fprintf(e.stdout, "job %s ended %s before the request took effect\n", dir.ID(), st.State)
	}
	return nil
}

// cancelPermissionRemedy is the remedy of a cancel refused for want of
// permission: the user who cancels (a GUI's, an operator's) is often not
// the one who submitted or runs the job.
func cancelPermissionRemedy(dir jobstore.JobDir) string {
	return "this user needs write permission on " + string(dir) + " to create " + jobstore.CancelFile +
		" there (and to open " + jobstore.LockFile + " for writing); for a root shared between users, make its directories " +
		"group-writable with the setgid bit (chmod 2775, one group for every user of the root) and give each user umask 002: " +
		"see \"Sharing a root between users\" in docs/guarantees.md"
}

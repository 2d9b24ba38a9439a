package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/axqua/jobstore"
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

func defineCancel(fs *pflag.FlagSet) runFunc {
	reason := fs.String("reason", "", "why the job should stop (shown in its status)")
	by := fs.String("by", "", `who asks (default "USER on HOST")`)
	return func(e *env, args, pos []string) error {
		dir := jobDirArg(pos[0])
		req := jobstore.CancelRequest{RequestedAt: jobstore.Now(), RequestedBy: *by, Reason: *reason}
		if req.RequestedBy == "" {
			req.RequestedBy = requester()
		}
		if err := jobstore.RequestCancel(dir, req); err != nil {
			if errors.Is(err, jobstore.ErrWrongState) {
				fmt.Fprintln(e.stderr, escapeTerminal(oneLine(errorLine(withCLIRemedy(err, "nothing to cancel: the job has ended ('jobstore show "+string(dir)+"' says how)")))))
				return &exitError{code: exitUnsuccessful}
			}
			if errors.Is(err, os.ErrPermission) {
				return withCLIRemedy(err, cancelPermissionRemedy(dir))
			}
			return jobDirArgument(err, string(dir))
		}
		stands, err := jobstore.ReadCancel(dir)
		if err != nil {
			// Published (or found) but unreadable: the request holds all the same.
			fmt.Fprintf(e.stdout, "job %s already has a cancel request, which cannot be read: %s\n", dir.ID(), oneLine(errorLine(err)))
			return nil
		}
		if stands != nil && stands.RequestedAt.Equal(req.RequestedAt) && stands.RequestedBy == req.RequestedBy && stands.Reason == req.Reason {
			fmt.Fprintf(e.stdout, "cancel requested for job %s %s\n", dir.ID(), requestText(stands))
		} else if stands != nil {
			fmt.Fprintf(e.stdout, "cancel already requested for job %s %s; this request changed nothing\n", dir.ID(), requestText(stands))
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

// requester is the default --by: "USER on HOST".
func requester() string {
	user := os.Getenv("USER")
	if user == "" {
		user = os.Getenv("USERNAME") // Windows
	}
	if user == "" {
		user = "unknown user"
	}
	host, err := os.Hostname()
	if err != nil {
		return user
	}
	return user + " on " + host
}

// requestText is `by "X" at T, reason "R"` for output lines.
func requestText(c *jobstore.CancelRequest) string {
	var b strings.Builder
	if c.RequestedBy != "" {
		fmt.Fprintf(&b, "by %q ", c.RequestedBy)
	}
	b.WriteString("at " + fmtTime(c.RequestedAt))
	if c.Reason != "" {
		fmt.Fprintf(&b, ", reason %q", c.Reason)
	}
	return oneLine(b.String())
}

// listCancelJSON and showCancelJSON are the cancel request in list's and
// show's JSON, present only when cancel.json exists.
type listCancelJSON struct {
	Cancel *jobstore.CancelRequest `json:"cancel,omitempty"`
}

type showCancelJSON struct {
	Cancel       *jobstore.CancelRequest `json:"cancel,omitempty"`
	CancelRecord *recordInfo             `json:"cancel_record,omitempty"`
}

// requestTextOrNone is requestText, or "" for an unreadable request.
func requestTextOrNone(c *jobstore.CancelRequest) string {
	if c == nil {
		return ""
	}
	return requestText(c)
}

// readCancel reads dir's cancel.json as show reads the other records: the
// request (nil if none or unreadable) and how the file was found.
func readCancel(dir jobstore.JobDir) (*jobstore.CancelRequest, recordInfo) {
	dir = jobDirArg(string(dir))
	if err := linkedJobDir(dir); err != nil {
		return nil, recordInfo{File: jobstore.CancelFile, Current: jobstore.CancelSchemaVersion, Err: err}
	}
	var raw json.RawMessage
	info := readRecord(dir.CancelPath(), jobstore.CancelFile, "read cancel request", jobstore.CancelSchemaVersion, &raw)
	if info.Err != nil || !info.Present {
		return nil, info
	}
	c, _, err := jobstore.DecodeCancel(raw)
	if err == nil && c.JobID != dir.ID() {
		err = &jobstore.Error{Subject: "job_id", Sentinel: jobstore.ErrInvalid,
			Msg: fmt.Sprintf("%q differs from the directory name %q", c.JobID, dir.ID())}
	}
	info.Err = at(err, "read cancel request", dir.CancelPath())
	if err != nil && c != nil && c.JobID != dir.ID() {
		info.Err = withCLIRemedy(info.Err, "the request names another job; remove it if it was copied here by mistake")
	}
	info.Migrated = err == nil && info.Written != nil && *info.Written != info.Current
	if err != nil {
		return nil, info
	}
	return c, info
}

// cancelNote is what show and list say about a cancel request (c and
// info from readCancel), given the job's status: "on request" for a job
// cancelled, "cancel requested too late" for one that ended otherwise,
// "cancel requested" for one still queued or running; "" when there is none.
func cancelNote(c *jobstore.CancelRequest, info recordInfo, st *jobstore.JobStatus) string {
	switch {
	case !info.Present && info.Err == nil:
		return ""
	case st != nil && st.State == jobstore.Cancelled:
		return "on request"
	case st != nil && st.State.Terminal():
		return "cancel requested too late"
	case c == nil:
		return "cancel requested (" + jobstore.CancelFile + " unreadable)"
	}
	return "cancel requested"
}

// cancelRow is show's "cancel" line: the request, or why it cannot be read;
// "" when there is none.
func cancelRow(dir jobstore.JobDir, st *jobstore.JobStatus) string {
	c, info := readCancel(dir)
	note := cancelNote(c, info, st)
	switch {
	case note == "":
		return ""
	case c == nil:
		return note + ": " + strings.TrimPrefix(versionText(info), "unreadable: ")
	}
	return note + " " + requestText(c)
}

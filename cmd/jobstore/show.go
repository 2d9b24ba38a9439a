package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

func showCmd() *command {
	return &command{
		name:    "show",
		args:    "DIR [--json]",
		summary: "show one job's spec and status, with schema versions",
		doc: `Shows the job in DIR (ROOT/ID): its spec (job.json) and its latest status
(status.json), how it is to run (max attempts and backoff, not before,
priority, timeout: those set), a pending retry's retry_at, each ended
attempt of a job that keeps them, and for each record the schema_version
written in the file, the one this jobstore reads, and whether the record was
migrated in memory to be read (a reader never rewrites the file). A failed
job's output ends with the last lines of its stderr.log ('jobstore logs').

Examples:
  jobstore show /srv/jobs/$ID
  jobstore show /srv/jobs/$ID --json

--json prints one JSON object:

  {"job_id": "...", "dir": "DIR",
   "spec": {job.json as read} or null, "status": {status.json as read} or null,
   "spec_record":   {"file": "job.json", "present": true,
                     "schema_version_written": 1, "schema_version_current": 1,
                     "migrated_in_memory": false, "error": null or {...}},
   "status_record": {same for status.json},
   "due_at": "...", "retrying": true,
   "cancel": {cancel.json as read}, "cancel_record": {same for cancel.json}}

"cancel" and "cancel_record" are present only when DIR/cancel.json exists;
"due_at" and "retrying" only for a queued job with a not_before or a pending
retry, as in list --json; "error" is as in 'jobstore help list'.

Exit codes: 0 shown; 3 DIR is not a job, or a record cannot be read (what
could be read is still printed, the error goes to stderr).
Details: docs/cli.md#show`,
		minPos: 1, maxPos: 1, posNames: "DIR",
		define: defineShow,
	}
}

// showOptions are what "jobstore show" is told: DIR and its flags.
type showOptions struct {
	Dir  string // the job directory as given
	JSON bool   // print JSON instead of the table
}

func defineShow(fs *pflag.FlagSet) runFunc {
	var opts showOptions
	fs.BoolVar(&opts.JSON, "json", false, "print JSON (shape in the help text)")
	return func(e *env, args, pos []string) error {
		opts.Dir = pos[0]
		return runShow(e, opts)
	}
}

// runShow prints opts.Dir's job: its spec, status and records, and the
// end of stderr.log of a failed job. A record that cannot be read is
// shown as such, and its error returned after.
func runShow(e *env, opts showOptions) error {
	j := jobview.ReadJob(jobview.JobDirArg(opts.Dir))
	if j.Spec == nil && !j.SpecInfo.Present {
		return remedy.JobDirArgument(j.SpecInfo.Err, opts.Dir) // not a job: nothing to show
	}
	if opts.JSON {
		if err := jobview.WriteJSON(e.stdout, jobview.NewShowJSON(j)); err != nil {
			return err
		}
	} else {
		printJob(e.stdout, j)
		if j.Status != nil && j.Status.State == jobstore.Failed {
			printStderrTail(e.stdout, j.Dir)
		}
	}
	if j.SpecInfo.Err != nil {
		return j.SpecInfo.Err
	}
	return j.StatusInfo.Err
}

// printJob prints a job as aligned "field  value" lines.
func printJob(w io.Writer, j jobview.JobRecords) {
	tw := newTableWriter(w)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, termtext.EscapeTerminal(termtext.OneLine(v))) }
	row("job", j.Dir.ID())
	row("dir", string(j.Dir))
	if s := j.Spec; s != nil {
		row("kind", s.Kind)
		sub := jobview.FmtTime(s.SubmittedAt)
		if s.SubmittedBy != "" {
			sub += " by " + s.SubmittedBy
		}
		row("submitted", sub)
		if len(s.Labels) > 0 {
			row("labels", labelFlag(s.Labels).String())
		}
		if len(s.Params) > 0 {
			row("params", string(s.Params))
		}
		if sched := jobview.ScheduleText(s); sched != "" {
			row("schedule", sched)
		}
	}
	row(jobstore.SpecFile, jobview.VersionText(j.SpecInfo))
	row(jobstore.StatusFile, jobview.VersionText(j.StatusInfo))
	if st := j.Status; st != nil {
		state := string(st.State)
		if note := jobview.ScheduleNote(j.Spec, st, time.Now()); note != "" {
			state += ", " + note
		}
		if note := jobview.AttemptNote(j.Spec, st); note != "" {
			state += ", " + note
		}
		row("state", state)
		jobview.StatusRows(st, true, row)
		if st.RetryAt != nil {
			row("retry at", jobview.FmtTime(*st.RetryAt)+jobview.UntilText(*st.RetryAt, time.Now()))
		}
		for _, a := range jobview.NumberedAttempts(st) {
			if a.Ended != nil {
				row(a.Label, jobview.AttemptText(*a.Ended))
			}
		}
	}
	if c := jobview.CancelRow(j.Dir, j.Status); c != "" {
		row("cancel", c)
	}
	tw.Flush()
}

// stderrTailLines is how many of the last lines of stderr.log show prints
// for a failed job; stderrTailBytes the most it reads to find them.
const (
	stderrTailLines = 10
	stderrTailBytes = 16 << 10
)

// printStderrTail prints the last lines of the job's stderr.log (kept by
// 'jobstore work'), each escaped for the terminal, if there is one.
func printStderrTail(w io.Writer, dir jobstore.JobDir) {
	t, found, err := jobview.ReadLogTail(dir, jobview.StderrFile, -1, stderrTailBytes)
	switch {
	case err != nil:
		fmt.Fprintf(w, "\n%s: %s\n", jobview.StderrFile, termtext.EscapeTerminal(termtext.OneLine(remedy.ErrorLine(err))))
		return
	case !found || len(t.Text) == 0:
		return
	}
	lines := strings.Split(strings.TrimRight(string(t.Text), "\n"), "\n")
	if t.Cut && len(lines) > 1 {
		lines = lines[1:] // the first is likely cut
	}
	if len(lines) > stderrTailLines {
		lines = lines[len(lines)-stderrTailLines:]
	}
	fmt.Fprintf(w, "\nlast %s of %s ('jobstore logs --stderr %s' prints it all):\n", termtext.Plural(len(lines), "line"), jobview.StderrFile, termtext.EscapeTerminal(string(dir)))
	for _, l := range lines {
		fmt.Fprintln(w, "  "+termtext.EscapeTerminal(strings.TrimSuffix(l, "\r")))
	}
}

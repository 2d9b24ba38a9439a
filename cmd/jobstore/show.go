package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/axqua/jobstore"
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

type showJSON struct {
	ID           string              `json:"job_id"`
	Dir          string              `json:"dir"`
	Spec         *jobstore.JobSpec   `json:"spec"`
	Status       *jobstore.JobStatus `json:"status"`
	SpecRecord   recordInfo          `json:"spec_record"`
	StatusRecord recordInfo          `json:"status_record"`
	dueJSON
	showCancelJSON
}

func defineShow(fs *pflag.FlagSet) runFunc {
	asJSON := fs.Bool("json", false, "print JSON (shape in the help text)")
	return func(e *env, args, pos []string) error {
		j := readJob(jobDirArg(pos[0]))
		if j.Spec == nil && !j.SpecInfo.Present {
			return jobDirArgument(j.SpecInfo.Err, pos[0]) // not a job: nothing to show
		}
		if *asJSON {
			if err := writeJSON(e.stdout, newShowJSON(j)); err != nil {
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
}

// newShowJSON is j as show --json prints it (its cancel request read now).
func newShowJSON(j jobRecords) showJSON {
	out := showJSON{ID: j.Dir.ID(), Dir: string(j.Dir), Spec: j.Spec, Status: j.Status,
		SpecRecord: j.SpecInfo, StatusRecord: j.StatusInfo, dueJSON: newDueJSON(j.Spec, j.Status)}
	out.SpecRecord.ErrJSON = newErrorJSON(j.SpecInfo.Err)
	out.StatusRecord.ErrJSON = newErrorJSON(j.StatusInfo.Err)
	if c, info := readCancel(j.Dir); info.Present || info.Err != nil {
		info.ErrJSON = newErrorJSON(info.Err)
		out.Cancel, out.CancelRecord = c, &info
	}
	return out
}

// printJob prints a job as aligned "field  value" lines.
func printJob(w io.Writer, j jobRecords) {
	tw := newTableWriter(w)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, escapeTerminal(oneLine(v))) }
	row("job", j.Dir.ID())
	row("dir", string(j.Dir))
	if s := j.Spec; s != nil {
		row("kind", s.Kind)
		sub := fmtTime(s.SubmittedAt)
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
		if sched := scheduleText(s); sched != "" {
			row("schedule", sched)
		}
	}
	row(jobstore.SpecFile, versionText(j.SpecInfo))
	row(jobstore.StatusFile, versionText(j.StatusInfo))
	if st := j.Status; st != nil {
		state := string(st.State)
		if note := scheduleNote(j.Spec, st, time.Now()); note != "" {
			state += ", " + note
		}
		if note := attemptNote(j.Spec, st); note != "" {
			state += ", " + note
		}
		row("state", state)
		statusRows(st, true, row)
		if st.RetryAt != nil {
			row("retry at", fmtTime(*st.RetryAt)+untilText(*st.RetryAt, time.Now()))
		}
		for _, a := range numberedAttempts(st) {
			if a.ended != nil {
				row(a.label, attemptText(*a.ended))
			}
		}
	}
	if c := cancelRow(j.Dir, j.Status); c != "" {
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
	t, found, err := readLogTail(dir, stderrFile, -1, stderrTailBytes)
	switch {
	case err != nil:
		fmt.Fprintf(w, "\n%s: %s\n", stderrFile, escapeTerminal(oneLine(errorLine(err))))
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
	fmt.Fprintf(w, "\nlast %s of %s ('jobstore logs --stderr %s' prints it all):\n", plural(len(lines), "line"), stderrFile, escapeTerminal(string(dir)))
	for _, l := range lines {
		fmt.Fprintln(w, "  "+escapeTerminal(strings.TrimSuffix(l, "\r")))
	}
}

// statusRows gives row what show prints of st after its state: seq,
// progress (with a bar when bar is set), message, times, runner, exit code,
// error and remedy. The job page of serve shows the same rows.
func statusRows(st *jobstore.JobStatus, bar bool, row func(name, value string)) {
	row("seq", fmt.Sprint(st.Seq))
	if st.Progress != nil {
		p := fmtProgress(st.Progress)
		if bar {
			p += "  " + progressBar(st.Progress)
		}
		row("progress", p)
	}
	if st.Message != "" {
		row("message", st.Message)
	}
	row("updated", fmtTime(st.UpdatedAt))
	if st.StartedAt != nil {
		row("started", fmtTimePtr(st.StartedAt))
	}
	if st.FinishedAt != nil {
		fin := fmtTimePtr(st.FinishedAt)
		if st.StartedAt != nil {
			fin += " (ran " + fmtAge(st.FinishedAt.Sub(*st.StartedAt)) + ")"
		}
		row("finished", fin)
	}
	if st.PID != 0 || st.Host != "" {
		row("runner", fmt.Sprintf("pid %d on %s", st.PID, st.Host))
	}
	if st.ExitCode != nil {
		row("exit code", fmt.Sprint(*st.ExitCode))
	}
	if st.Error != "" {
		row("error", st.Error)
	}
	if st.Remedy != "" {
		row("remedy", st.Remedy)
	}
}

// versionText says how a record was found: its versions, a migration, or
// why it could not be read.
func versionText(r recordInfo) string {
	switch {
	case !r.Present && r.Err == nil && r.File == jobstore.StatusFile:
		return "absent: nothing has run yet"
	case r.Err != nil:
		subject, what, _ := problem(r.Err, r.File)
		if subject != r.File {
			what = subject + ": " + what
		}
		return "unreadable: " + what
	case r.Migrated:
		return fmt.Sprintf("schema_version %d, migrated to %d in memory (the file is unchanged)", *r.Written, r.Current)
	case r.Written != nil:
		return fmt.Sprintf("schema_version %d (current)", *r.Written) // version 1 is current for a record that needs no more
	default:
		return fmt.Sprintf("schema_version %d (current)", r.Current)
	}
}

package main

import (
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/axqua/jobstore"
)

func showCmd() *command {
	return &command{
		name:    "show",
		args:    "DIR [--json]",
		summary: "show one job's spec and status, with schema versions",
		doc: `Shows the job in DIR (ROOT/ID): its spec (job.json) and its latest status
(status.json), and for each record the schema_version written in the file,
the version this jobstore reads, and whether the record was migrated in
memory to be read (the file is never rewritten by a reader).

--json prints one JSON object:

  {"job_id": "...", "dir": "DIR",
   "spec": {job.json as read} or null, "status": {status.json as read} or null,
   "spec_record":   {"file": "job.json", "present": true,
                     "schema_version_written": 1, "schema_version_current": 1,
                     "migrated_in_memory": false, "error": null or {...}},
   "status_record": {same for status.json},
   "cancel": {cancel.json as read}, "cancel_record": {same for cancel.json}}

"cancel" and "cancel_record" are present only when DIR/cancel.json exists
(someone asked the job to stop; see "jobstore cancel").

"error" is as in 'jobstore help list'.

Exit codes: 0 shown; 3 DIR is not a job, or a record cannot be read (what
could be read is still printed, the error goes to stderr).`,
		run: runShow,
	}
}

type showJSON struct {
	ID           string              `json:"job_id"`
	Dir          string              `json:"dir"`
	Spec         *jobstore.JobSpec   `json:"spec"`
	Status       *jobstore.JobStatus `json:"status"`
	SpecRecord   recordInfo          `json:"spec_record"`
	StatusRecord recordInfo          `json:"status_record"`
	showCancelJSON
}

func runShow(e *env, fs *flag.FlagSet, args []string) error {
	asJSON := fs.Bool("json", false, "print JSON (shape in the help text)")
	pos, err := parseArgs(fs, args, 1, 1, "DIR")
	if err != nil {
		return err
	}
	j := readJob(jobDirArg(pos[0]))
	if j.Spec == nil && !j.SpecInfo.Present {
		return jobDirArgument(j.SpecInfo.Err, pos[0]) // not a job: nothing to show
	}
	if *asJSON {
		out := showJSON{ID: j.Dir.ID(), Dir: string(j.Dir), Spec: j.Spec, Status: j.Status,
			SpecRecord: j.SpecInfo, StatusRecord: j.StatusInfo}
		out.SpecRecord.ErrJSON = newErrorJSON(j.SpecInfo.Err)
		out.StatusRecord.ErrJSON = newErrorJSON(j.StatusInfo.Err)
		if c, info := readCancel(j.Dir); info.Present || info.Err != nil {
			info.ErrJSON = newErrorJSON(info.Err)
			out.Cancel, out.CancelRecord = c, &info
		}
		if err := writeJSON(e.stdout, out); err != nil {
			return err
		}
	} else {
		printJob(e.stdout, j)
	}
	if j.SpecInfo.Err != nil {
		return j.SpecInfo.Err
	}
	return j.StatusInfo.Err
}

// printJob prints a job as aligned "field  value" lines.
func printJob(w io.Writer, j jobRecords) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
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
	}
	row(jobstore.SpecFile, versionText(j.SpecInfo))
	row(jobstore.StatusFile, versionText(j.StatusInfo))
	if st := j.Status; st != nil {
		row("state", string(st.State))
		row("seq", fmt.Sprint(st.Seq))
		if st.Progress != nil {
			row("progress", fmtProgress(st.Progress)+"  "+progressBar(st.Progress))
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
	if c := cancelRow(j.Dir, j.Status); c != "" {
		row("cancel", c)
	}
	tw.Flush()
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

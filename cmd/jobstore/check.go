package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

func checkCmd() *command {
	return &command{
		name:    "check",
		args:    "DIR|ROOT [--json]",
		summary: "validate the records of one job, or of every job under a root",
		doc: `Validates job records as the library reads them: job.json, status.json, and
cancel.json when it exists (read as 'jobstore show' reads it). Each file is
read with the tolerant reader (a link, a FIFO or a file over 16 MiB is a
problem, reported at once), its schema_version is checked (newer than this
jobstore, or older with no migration path, is a problem; older with a path
is fine and said so), then its fields (job_id, kind, params, state,
progress, timestamps, the request), and job_id must match the directory
name. A missing status.json is no problem ("nothing has run yet"), but such
a job is not queued: 'jobstore work' and StartNext never start it (only
Start of its directory does). Its line says so, and the summary counts
these jobs, since a program that wrote job.json alone most likely meant to
submit it (Submit and 'jobstore submit' write the queued status.json too).
A missing job.json is a problem.

Examples:
  jobstore check /srv/jobs
  jobstore check /srv/jobs/$ID --json

DIR is a job directory if it holds job.json or status.json; otherwise it is
taken as a ROOT and every directory in it (dot-names skipped) is checked as a
job, and ROOT/index.json too if present. A ROOT that holds entries but no
job directory (no directory with job.json) is not a root: exit 3.

Prints one line per job, then a summary:

  ok    ID  job.json v1, status.json v1 (succeeded), cancel.json v1
  ok    ID  job.json v1, status.json absent: not queued, no worker starts it
  FAIL  ID  status.json: schema_version: written by a newer jobstore ... Remedy: ...

The "ok" line (the "summary" in JSON) says what each file holds: the
schema_version written in it ("v1", with ", migrated to v1 in memory" when
it is older), ", unreadable" after it when it cannot be read, "unreadable"
alone when it holds no version, "absent" when there is none; cancel.json
is named only when it exists.

--json prints one JSON object instead:

  {"target": "DIR|ROOT", "is_root": true,
   "jobs": [{"job_id": "...", "dir": "ROOT/ID", "ok": false,
             "summary": "job.json v1, status.json v1 (succeeded)",
             "problems": [{"file": "status.json", "error": {...}}]}],
   "index_problem": null or {"file": "index.json", "error": {...}},
   "problems": N, "not_queued": N}

"not_queued" counts the jobs with job.json and no status.json.

"error" is as in 'jobstore help list'.

Exit codes: 0 no problems; 1 problems found (one FAIL line each, with the
subject and the remedy); 3 DIR|ROOT cannot be read, or ROOT holds no job.
Details: docs/cli.md#check`,
		minPos: 1, maxPos: 1, posNames: "DIR|ROOT",
		define: defineCheck,
	}
}

// finding is one problem with one record.
type finding struct {
	file string // job.json, status.json, index.json, or the directory
	err  error
}

// checkJSON is the output of "check --json".
type checkJSON struct {
	Target       string         `json:"target"`
	IsRoot       bool           `json:"is_root"`
	Jobs         []checkJobJSON `json:"jobs"`
	IndexProblem *findingJSON   `json:"index_problem"`
	Problems     int            `json:"problems"`
	NotQueued    int            `json:"not_queued"` // jobs with job.json and no status.json
}

type checkJobJSON struct {
	ID       string        `json:"job_id"`
	Dir      string        `json:"dir"`
	OK       bool          `json:"ok"`
	Summary  string        `json:"summary"` // the versions and state, as the "ok" line shows them
	Problems []findingJSON `json:"problems"`
}

type findingJSON struct {
	File  string            `json:"file"`
	Error *remedy.ErrorJSON `json:"error"`
}

// checkOptions are what "jobstore check" is told: ROOT or DIR, and its
// flags.
type checkOptions struct {
	Target string // a root, or one job directory
	JSON   bool   // print JSON instead of lines
}

func defineCheck(fs *pflag.FlagSet) runFunc {
	var opts checkOptions
	fs.BoolVar(&opts.JSON, "json", false, "print JSON instead of lines (shape in the help text)")
	return func(e *env, args, pos []string) error {
		opts.Target = pos[0]
		return runCheck(e, opts)
	}
}

// runCheck reads every record of the jobs under opts.Target (or of the
// one job it names) as the library would, and says what is wrong with
// each and what to do; problems found give exitUnsuccessful.
func runCheck(e *env, opts checkOptions) error {
	target := opts.Target
	var dirs []jobstore.JobDir
	var err error
	isRoot := !isJobDir(target)
	if isRoot {
		if dirs, err = jobview.RootJobDirs("check", target); err != nil {
			return err
		}
	} else {
		dirs = []jobstore.JobDir{jobstore.JobDir(target)}
	}

	out := checkJSON{Target: target, IsRoot: isRoot, Jobs: []checkJobJSON{}}
	var bad int
	var all [][]finding // per job, for the text output
	for _, d := range dirs {
		summary, findings, notQueued := checkJob(d)
		if notQueued {
			out.NotQueued++
		}
		all = append(all, findings)
		j := checkJobJSON{ID: d.ID(), Dir: string(d), OK: len(findings) == 0, Summary: summary, Problems: []findingJSON{}}
		for _, f := range findings {
			j.Problems = append(j.Problems, findingJSON{File: f.file, Error: remedy.NewErrorJSON(f.err)})
		}
		if len(findings) > 0 {
			bad++
			out.Problems += len(findings)
		}
		out.Jobs = append(out.Jobs, j)
	}
	var indexFinding *finding
	if isRoot && jobview.Exists(filepath.Join(target, jobstore.IndexFile)) {
		if _, err := jobstore.ReadIndex(target); err != nil {
			out.Problems++
			indexFinding = &finding{jobstore.IndexFile, remedy.WithCLIRemedy(err,
				"index.json is a cache: rebuild it with 'jobstore list ROOT --rebuild'")}
			out.IndexProblem = &findingJSON{File: jobstore.IndexFile, Error: remedy.NewErrorJSON(indexFinding.err)}
		}
	}
	if opts.JSON {
		if err := jobview.WriteJSON(e.stdout, out); err != nil {
			return err
		}
	} else {
		printCheck(e, out, all, indexFinding, bad)
	}
	if out.Problems > 0 {
		return &exitError{code: exitUnsuccessful}
	}
	return nil
}

// printCheck prints the result of a check as lines and a summary.
func printCheck(e *env, out checkJSON, findings [][]finding, index *finding, bad int) {
	tw := newTableWriter(e.stdout)
	for i, j := range out.Jobs {
		if j.OK {
			fmt.Fprintf(tw, "ok\t%s\t%s\n", termtext.EscapeTerminal(j.ID), termtext.EscapeTerminal(j.Summary))
			continue
		}
		for _, f := range findings[i] {
			fmt.Fprintf(tw, "FAIL\t%s\t%s\n", termtext.EscapeTerminal(j.ID), termtext.EscapeTerminal(findingText(f)))
		}
	}
	if index != nil {
		fmt.Fprintf(tw, "FAIL\t%s\t%s\n", jobstore.IndexFile, termtext.EscapeTerminal(findingText(*index)))
	}
	tw.Flush()
	if out.NotQueued > 0 {
		fmt.Fprintf(e.stdout, "%s without status.json (not queued): 'jobstore work' and StartNext pass such jobs over; "+
			"submit jobs with 'jobstore submit' or Submit, which write the queued status.json too (docs/format.md)\n",
			termtext.Plural(out.NotQueued, "job"))
	}
	what := "job " + out.Target
	if out.IsRoot {
		what = termtext.Plural(len(out.Jobs), "job") + " under " + out.Target
	}
	if out.Problems == 0 {
		fmt.Fprintf(e.stdout, "checked %s: no problems\n", what)
		return
	}
	fmt.Fprintf(e.stdout, "checked %s: %s in %s\n", what, termtext.Plural(out.Problems, "problem"), termtext.Plural(bad, "job"))
}

// isJobDir: dir holds either record (a status.json without job.json is a
// broken job, not a root).
func isJobDir(dir string) bool {
	d := jobstore.JobDir(dir)
	return jobview.Exists(d.SpecPath()) || jobview.Exists(d.StatusPath())
}

// checkJob validates one job directory. ok describes a job without
// findings; notQueued reports a job with a readable job.json and no
// status.json, which no worker starts.
func checkJob(d jobstore.JobDir) (ok string, findings []finding, notQueued bool) {
	j := jobview.ReadJob(d)
	if err := j.SpecInfo.Err; err != nil {
		findings = append(findings, finding{jobstore.SpecFile, err})
	} else if j.Spec.ID != d.ID() {
		findings = append(findings, finding{jobstore.SpecFile, idMismatch(d.SpecPath(), j.Spec.ID, d.ID())})
	}
	if err := j.StatusInfo.Err; err != nil {
		findings = append(findings, finding{jobstore.StatusFile, err})
	} else if j.Status != nil && j.Status.JobID != "" && j.Status.JobID != d.ID() {
		findings = append(findings, finding{jobstore.StatusFile, idMismatch(d.StatusPath(), j.Status.JobID, d.ID())})
	}
	_, cancel := jobview.ReadCancel(d) // as show reads it
	if cancel.Err != nil {
		findings = append(findings, finding{jobstore.CancelFile, cancel.Err})
	}
	ok = recordSummary(j.SpecInfo) + ", " + recordSummary(j.StatusInfo)
	if j.Status != nil {
		ok += " (" + string(j.Status.State) + ")"
	}
	if notQueued = j.SpecInfo.Err == nil && j.Status == nil && j.StatusInfo.Err == nil; notQueued {
		ok += ": not queued, no worker starts it"
	}
	if cancel.Present || cancel.Err != nil {
		ok += ", " + recordSummary(cancel)
	}
	return ok, findings, notQueued
}

// recordSummary says what a record file holds as found: nothing, the
// schema_version written in it (and whether it was migrated to be read),
// and whether it could be read at all.
func recordSummary(r jobview.RecordInfo) string {
	switch {
	case !r.Present && (r.Err == nil || errors.Is(r.Err, fs.ErrNotExist)):
		return r.File + " absent"
	case r.Err != nil && r.Written != nil:
		return fmt.Sprintf("%s v%d, unreadable", r.File, *r.Written)
	case r.Err != nil || r.Written == nil:
		return r.File + " unreadable"
	case r.Migrated:
		return fmt.Sprintf("%s v%d, migrated to v%d in memory", r.File, *r.Written, r.Current)
	default:
		return fmt.Sprintf("%s v%d", r.File, *r.Written)
	}
}

func idMismatch(path, found, want string) error {
	return remedy.WithCLIRemedy(&jobstore.Error{Op: "check", Path: path, Subject: "job_id", Sentinel: jobstore.ErrInvalid,
		Msg: fmt.Sprintf("%q differs from the directory name %q", found, want), Found: found, Supported: want},
		"the directory name is the job ID: rename the directory, or correct job_id")
}

// findingText is "file: subject: what. Remedy: remedy", one line.
func findingText(f finding) string {
	subject, what, remedy := remedy.Problem(f.err, f.file)
	s := f.file + ": "
	if subject != f.file {
		s += subject + ": "
	}
	s += what
	if remedy != "" {
		s += ". Remedy: " + remedy
	}
	return s
}

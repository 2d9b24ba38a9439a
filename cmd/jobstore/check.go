package main

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"github.com/axqua/jobstore"
)

func checkCmd() *command {
	return &command{
		name:    "check",
		args:    "DIR|ROOT",
		summary: "validate the records of one job, or of every job under a root",
		doc: `Validates job records as the library reads them: each file is read with the
tolerant reader, its schema_version is checked (newer than this jobstore, or
older with no migration path, is a problem; older with a path is fine and
said so), then its fields (job_id, kind, params, state, progress,
timestamps), and job_id must match the directory name. A missing status.json
is fine ("nothing has run yet"); a missing job.json is not.

DIR is a job directory if it holds job.json or status.json; otherwise it is
taken as a ROOT and every directory in it (dot-names skipped) is checked as a
job, and ROOT/index.json too if present.

Prints one line per job, then a summary:

  ok    ID  job.json v1, status.json v1 (succeeded)
  FAIL  ID  status.json: schema_version: written by a newer jobstore ... Remedy: ...

Exit codes: 0 no problems; 1 problems found (one FAIL line each, with the
subject and the remedy); 3 DIR|ROOT cannot be read.`,
		run: runCheck,
	}
}

// finding is one problem with one record.
type finding struct {
	file string // job.json, status.json, index.json, or the directory
	err  error
}

func runCheck(e *env, fs *flag.FlagSet, args []string) error {
	pos, err := parseArgs(fs, args, 1, 1, "DIR|ROOT")
	if err != nil {
		return err
	}
	target := pos[0]
	var dirs []jobstore.JobDir
	isRoot := !isJobDir(target)
	if isRoot {
		if dirs, err = jobstore.JobDirs(target); err != nil {
			return withRemedy(err, "give a job directory (ROOT/ID) or a root of job directories")
		}
	} else {
		dirs = []jobstore.JobDir{jobstore.JobDir(target)}
	}

	tw := tabwriter.NewWriter(e.stdout, 0, 8, 2, ' ', 0)
	var bad, problems int
	for _, d := range dirs {
		ok, findings := checkJob(d)
		if len(findings) == 0 {
			fmt.Fprintf(tw, "ok\t%s\t%s\n", d.ID(), ok)
			continue
		}
		bad++
		problems += len(findings)
		for _, f := range findings {
			fmt.Fprintf(tw, "FAIL\t%s\t%s\n", d.ID(), findingText(f))
		}
	}
	if isRoot && exists(filepath.Join(target, jobstore.IndexFile)) {
		if _, err := jobstore.ReadIndex(target); err != nil {
			problems++
			fmt.Fprintf(tw, "FAIL\t%s\t%s\n", jobstore.IndexFile, findingText(finding{jobstore.IndexFile, withRemedy(err,
				"index.json is a cache: rebuild it with 'jobstore list ROOT --rebuild'")}))
		}
	}
	tw.Flush()
	what := "job " + target
	if isRoot {
		what = plural(len(dirs), "job") + " under " + target
	}
	if problems == 0 {
		fmt.Fprintf(e.stdout, "checked %s: no problems\n", what)
		return nil
	}
	fmt.Fprintf(e.stdout, "checked %s: %s in %s\n", what, plural(problems, "problem"), plural(bad, "job"))
	return &exitError{code: exitUnsuccessful}
}

// isJobDir: dir holds either record (a status.json without job.json is a
// broken job, not a root).
func isJobDir(dir string) bool {
	d := jobstore.JobDir(dir)
	return exists(d.SpecPath()) || exists(d.StatusPath())
}

// checkJob validates one job directory. ok describes a job without
// findings.
func checkJob(d jobstore.JobDir) (ok string, findings []finding) {
	j := readJob(d)
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
	ok = recordSummary(j.SpecInfo) + ", " + recordSummary(j.StatusInfo)
	if j.Status != nil {
		ok += " (" + string(j.Status.State) + ")"
	}
	return ok, findings
}

func recordSummary(r recordInfo) string {
	switch {
	case !r.Present:
		return r.File + " absent"
	case r.Migrated:
		return fmt.Sprintf("%s v%d, migrated to v%d in memory", r.File, *r.Written, r.Current)
	default:
		return fmt.Sprintf("%s v%d", r.File, r.Current)
	}
}

func idMismatch(path, found, want string) error {
	return &jobstore.Error{Op: "check", Path: path, Subject: "job_id", Sentinel: jobstore.ErrInvalid,
		Msg: fmt.Sprintf("%q differs from the directory name %q", found, want), Found: found, Supported: want,
		Remedy: "the directory name is the job ID: rename the directory, or correct job_id"}
}

// withRemedy gives err a remedy if it has none.
func withRemedy(err error, remedy string) error {
	var e *jobstore.Error
	if errors.As(err, &e) && e.Remedy == "" {
		e.Remedy = remedy
		return err
	}
	if e == nil {
		return &jobstore.Error{Op: "check", Err: err, Remedy: remedy}
	}
	return err
}

// findingText is "file: subject: what. Remedy: remedy", one line.
func findingText(f finding) string {
	subject, what, remedy := problem(f.err, f.file)
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

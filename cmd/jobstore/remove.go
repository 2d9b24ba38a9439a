package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

func rmCmd() *command {
	return &command{
		name:    "rm",
		args:    "DIR... [--dry-run] [--json]",
		summary: "remove finished jobs, each whole",
		doc: `Removes each finished job DIR (ROOT/ID) whole (Remove): its directory and
everything in it, read-only job.json and cancel.json included. Only a job
whose status is final (succeeded, failed, cancelled, lost) and that no
process holds is removed; a queued or running job, or one another process
is working on, is refused and left as it was. The job leaves ROOT in one
rename, so a reader sees it whole or not at all. ROOT/index.json is not
changed: 'jobstore list ROOT --rebuild' rebuilds it, prune keeps it true.

Examples:
  jobstore rm /srv/jobs/$ID
  jobstore rm /srv/jobs/$ID1 /srv/jobs/$ID2 --dry-run

--dry-run says what would be removed, judging by each job's status alone,
and removes nothing (a job that a process holds at that moment would still
be refused).

Prints one line per DIR, then a summary line:

  removed       ID  succeeded, finished 2026-11-30T09:35:40Z
  would remove  ID  succeeded, finished 2026-11-30T09:35:40Z
  refused       ID  <why, and what to do>
  error         ID  <why it could not be removed>

--json prints one JSON object instead:

  {"dry_run": false,
   "jobs": [{"job_id": "...", "dir": "ROOT/ID", "outcome": "removed",
             "state": "succeeded", "finished_at": "...", "error": null}],
   "removed": N, "would_remove": N, "refused": N, "failed": N}

"outcome" is "removed", "would_remove", "refused" (not finished, or held by
a process) or "failed"; "state" and "finished_at" are the status read
before the removal (null when it could not be read); "error" is null or as
in 'jobstore help list'.

Exit codes: 0 every DIR removed (with --dry-run: would be); 1 some job was
refused, the others were removed; 2 bad arguments; 3 some DIR is not a job,
or could not be read or removed (the others were).
Details: docs/cli.md#rm`,
		minPos: 1, maxPos: -1, posNames: "DIR",
		define: defineRm,
	}
}

func pruneCmd() *command {
	return &command{
		name:    "prune",
		args:    "ROOT --older-than D [--dry-run] [--json]",
		summary: "remove the jobs under ROOT that finished more than D ago",
		doc: `Removes every finished job under ROOT whose finished_at is more than D ago
(Prune), each as 'jobstore rm' removes one: D is a Go duration (36h, 90m)
or a number of days (30d, 1.5d, 2d12h); 0 removes every finished job. A job
that ended without finished_at is judged by its updated_at. Queued and
running jobs, jobs whose status cannot be read, and jobs a process holds
are left alone. Then prune deletes what interrupted removals left in ROOT
(hidden .remove-* directories in which nothing changed for 15 minutes), and
takes the removed jobs out of ROOT/index.json, if there is one.

Examples:
  jobstore prune /srv/jobs --older-than 30d
  jobstore prune /srv/jobs --older-than 36h --dry-run --json

--dry-run lists the jobs that would be removed, and removes nothing.

Prints one line per job, then a summary line:

  removed       ID  succeeded, finished 2026-11-30T09:35:40Z
  would remove  ID  succeeded, finished 2026-11-30T09:35:40Z
  refused       ID  <which process holds it>
  error         ID  <why this finished job could not be removed>

A job that finished while prune ran (between its own read of the job and
Prune's) is removed with its state unknown, and its line says why:

  removed       ID  state unknown: it was running when prune read it, and finished before Prune read it

--json prints one JSON object instead:

  {"root": "ROOT", "older_than": "720h0m0s", "cutoff": "...", "dry_run": false,
   "jobs": [ as in 'jobstore help rm' ],
   "removed": N, "would_remove": N, "refused": N, "failed": N}

("state" and "finished_at" are null for a job removed with its state unknown.)

Exit codes: 0 done (whether or not anything was removed); 1 some finished
jobs could not be removed (listed); 2 bad arguments (--older-than missing
or negative); 3 ROOT cannot be read, or holds entries but no job (nothing
is removed then), or what was left after the removals (ROOT/index.json, a
hidden .remove-* directory) could not be updated or deleted.
Details: docs/cli.md#prune`,
		minPos: 1, maxPos: 1, posNames: "ROOT",
		define: definePrune,
	}
}

// removeJSON is the output of "rm --json" and, with Root, OlderThan and
// Cutoff, of "prune --json".
type removeJSON struct {
	Root        string          `json:"root,omitempty"`
	OlderThan   string          `json:"older_than,omitempty"`
	Cutoff      string          `json:"cutoff,omitempty"`
	DryRun      bool            `json:"dry_run"`
	Jobs        []removeJobJSON `json:"jobs"`
	Removed     int             `json:"removed"`
	WouldRemove int             `json:"would_remove"`
	Refused     int             `json:"refused"`
	Failed      int             `json:"failed"`
}

type removeJobJSON struct {
	ID         string            `json:"job_id"`
	Dir        string            `json:"dir"`
	Outcome    string            `json:"outcome"` // removed, would_remove, refused, failed
	State      *string           `json:"state"`
	FinishedAt *string           `json:"finished_at"`
	Error      *remedy.ErrorJSON `json:"error"`
	err        error
	// unknown says why State is unknown for a job Prune removed: prune did
	// not read its final status before Prune removed it.
	unknown string
}

// The outcomes of one job.
const (
	outcomeRemoved     = "removed"
	outcomeWouldRemove = "would_remove"
	outcomeRefused     = "refused"
	outcomeFailed      = "failed"
)

// add records one job's outcome, judging an error: a refusal (the job is
// not finished, or a process holds it) or a failure.
func (out *removeJSON) add(dir jobstore.JobDir, st *jobstore.JobStatus, done string, err error) {
	j := removeJobJSON{ID: dir.ID(), Dir: string(dir), Outcome: done, err: err}
	if st != nil {
		state := string(st.State)
		j.State = &state
		if at := finishedAt(st); at != nil {
			s := jobview.FmtTime(*at)
			j.FinishedAt = &s
		}
	}
	if err != nil {
		j.Outcome = outcomeFailed
		if refused(err) {
			j.Outcome = outcomeRefused
		}
		j.err = withRemoveRemedy(err, dir, st)
		j.Error = remedy.NewErrorJSON(j.err)
	}
	switch j.Outcome {
	case outcomeRemoved:
		out.Removed++
	case outcomeWouldRemove:
		out.WouldRemove++
	case outcomeRefused:
		out.Refused++
	default:
		out.Failed++
	}
	out.Jobs = append(out.Jobs, j)
}

// refused reports a refusal of Remove: the job is not finished
// (ErrWrongState) or a process holds it or its next attempt (ErrLocked).
func refused(err error) bool {
	return errors.Is(err, jobstore.ErrLocked) || errors.Is(err, jobstore.ErrWrongState)
}

// withRemoveRemedy gives a refusal for the job's state a remedy that names
// the commands to run (the library's names Go functions).
func withRemoveRemedy(err error, dir jobstore.JobDir, st *jobstore.JobStatus) error {
	if !errors.Is(err, jobstore.ErrWrongState) {
		return err
	}
	if st != nil && st.State == jobstore.Running {
		return remedy.WithCLIRemedy(err, fmt.Sprintf("wait for it to end ('jobstore watch %s') or cancel it ('jobstore cancel %s'); "+
			"if its runner is gone, 'jobstore reconcile %s' marks it lost", dir, dir, filepath.Dir(string(dir))))
	}
	return remedy.WithCLIRemedy(err, fmt.Sprintf("cancel it first ('jobstore cancel %s'), then remove it", dir))
}

// finishedAt is when st ended: finished_at, or updated_at for a final
// record without one (as Prune judges it); nil for a job not finished.
func finishedAt(st *jobstore.JobStatus) *time.Time {
	switch {
	case st == nil || !st.State.Terminal():
		return nil
	case st.FinishedAt != nil:
		return st.FinishedAt
	}
	return &st.UpdatedAt
}

// rmOptions are what "jobstore rm" is told: the job directories and the
// flags.
type rmOptions struct {
	Dirs   []string // the job directories as given
	JSON   bool     // print JSON instead of lines
	DryRun bool     // say what would be removed; remove nothing
}

func defineRm(fs *pflag.FlagSet) runFunc {
	var opts rmOptions
	fs.BoolVar(&opts.JSON, "json", false, "print JSON instead of lines (shape in the help text)")
	fs.BoolVar(&opts.DryRun, "dry-run", false, "say what would be removed; remove nothing")
	return func(e *env, args, pos []string) error {
		opts.Dirs = pos
		return runRm(e, opts)
	}
}

// runRm removes each finished job of opts.Dirs and says so per job; a job
// that has not finished is refused (exitUnsuccessful), one that cannot be
// removed gives exitRuntime.
func runRm(e *env, opts rmOptions) error {
	out := removeJSON{DryRun: opts.DryRun, Jobs: []removeJobJSON{}}
	for _, p := range opts.Dirs {
		dir := jobstore.JobDir(p)
		st, rerr := jobstore.ReadStatus(dir)
		switch {
		case rerr != nil && opts.DryRun:
			out.add(dir, nil, "", remedy.JobDirArgument(rerr, p))
		case opts.DryRun && (st == nil || !st.State.Terminal()):
			out.add(dir, st, "", notFinished(dir, st))
		case opts.DryRun:
			out.add(dir, st, outcomeWouldRemove, nil)
		default:
			if err := jobstore.Remove(dir); err != nil {
				out.add(dir, st, "", remedy.JobDirArgument(err, p))
			} else {
				out.add(dir, st, outcomeRemoved, nil)
			}
		}
	}
	if err := printRemoval(e, opts.JSON, out, "nothing"); err != nil {
		return err
	}
	switch {
	case out.Failed > 0:
		return &exitError{code: exitRuntime}
	case out.Refused > 0:
		return &exitError{code: exitUnsuccessful}
	}
	return nil
}

// notFinished is Remove's refusal of a job whose status st is not final,
// for a dry run, which does not call Remove.
func notFinished(dir jobstore.JobDir, st *jobstore.JobStatus) error {
	msg := "the job has no status yet"
	var state string
	if st != nil {
		state = string(st.State)
		msg = "the job is " + state
	}
	return &jobstore.Error{Op: "remove", Path: dir.StatusPath(), Subject: "state", Sentinel: jobstore.ErrWrongState,
		Found: state, Msg: msg + "; only a finished job is removed"}
}

// pruneOptions are what "jobstore prune" is told: ROOT and its flags.
type pruneOptions struct {
	Root      string
	OlderThan time.Duration // remove the jobs that finished more than this long ago
	JSON      bool          // print JSON instead of lines
	DryRun    bool          // list what would be removed; remove nothing
}

func definePrune(fs *pflag.FlagSet) runFunc {
	var opts pruneOptions
	fs.BoolVar(&opts.JSON, "json", false, "print JSON instead of lines (shape in the help text)")
	fs.BoolVar(&opts.DryRun, "dry-run", false, "list what would be removed; remove nothing")
	var age ageFlag
	fs.Var(&age, "older-than", "remove the jobs that finished more than `D` ago: 36h, 90m, 30d, 2d12h; 0: every finished job")
	return func(e *env, args, pos []string) error {
		if !age.set {
			return remedy.Usagef("--older-than is required: say how long ago a job must have finished to be removed (30d, 36h, 0 for every finished job)")
		}
		opts.Root, opts.OlderThan = pos[0], age.d
		return runPrune(e, opts)
	}
}

// runPrune removes the jobs under opts.Root that finished more than
// opts.OlderThan ago and says so per job; a job that could not be removed
// gives exitUnsuccessful.
func runPrune(e *env, opts pruneOptions) error {
	root := opts.Root
	dirs, err := jobview.RootJobDirs("prune", root)
	if err != nil {
		return err
	}
	cutoff := time.Now().Add(-opts.OlderThan)
	out := removeJSON{Root: root, OlderThan: opts.OlderThan.String(), Cutoff: jobview.FmtTime(cutoff), DryRun: opts.DryRun, Jobs: []removeJobJSON{}}
	isJob := map[string]bool{}
	// What each job's status was before Prune: Prune reads it again, later
	// and by a later cutoff, and a job may finish in between.
	before := map[string]statusBefore{}
	for _, dir := range dirs {
		isJob[string(dir)] = true
		st, err := jobstore.ReadStatus(dir)
		before[dir.ID()] = statusBefore{read: true, st: st, err: err}
		if at := finishedAt(st); opts.DryRun && err == nil && at != nil && at.Before(cutoff) {
			out.add(dir, st, outcomeWouldRemove, nil)
		}
	}
	if !opts.DryRun {
		removed, err := jobstore.Prune(root, opts.OlderThan)
		for _, dir := range removed {
			out.addPruned(dir, before[dir.ID()])
		}
		for _, ferr := range pruneFailures(err) {
			var je *jobstore.Error
			if errors.As(ferr, &je) && je.Op == "prune" && isJob[je.Path] && je.Err != nil {
				dir := jobstore.JobDir(je.Path)
				out.add(dir, before[dir.ID()].final(), "", je.Err) // the job's own error, from Remove
				continue
			}
			if err := printRemoval(e, opts.JSON, out, ""); err != nil {
				return err
			}
			return ferr // the root, its leftovers or its index: not one job's
		}
	}
	if err := printRemoval(e, opts.JSON, out, "finished before "+jobview.FmtTime(cutoff)); err != nil {
		return err
	}
	if out.Failed+out.Refused > 0 {
		return &exitError{code: exitUnsuccessful}
	}
	return nil
}

// statusBefore is a job's status as prune read it before Prune ran.
type statusBefore struct {
	read bool // false: the job was not there when prune listed ROOT
	st   *jobstore.JobStatus
	err  error
}

// final is the status read, if it was final; else nil.
func (b statusBefore) final() *jobstore.JobStatus {
	if b.err != nil || b.st == nil || !b.st.State.Terminal() {
		return nil
	}
	return b.st
}

// addPruned records a job Prune removed, with its state and finish as read
// before; when those are not known (the job finished, or appeared, after
// that read, or its status could not be read then), it says why.
func (out *removeJSON) addPruned(dir jobstore.JobDir, b statusBefore) {
	st := b.final()
	out.add(dir, st, outcomeRemoved, nil)
	if st != nil {
		return
	}
	j := &out.Jobs[len(out.Jobs)-1]
	switch {
	case !b.read:
		j.unknown = "state unknown: it appeared after prune listed ROOT, and finished before Prune read it"
	case b.err != nil:
		_, what, _ := remedy.Problem(b.err, jobstore.StatusFile)
		j.unknown = "state unknown: its status could not be read before Prune read it (" + what + ")"
	case b.st == nil:
		j.unknown = "state unknown: it had no status when prune read it, and a final one when Prune did"
	default:
		j.unknown = "state unknown: it was " + string(b.st.State) + " when prune read it, and finished before Prune read it"
	}
}

// pruneFailures is each failure Prune reported: the errors its *Error for
// the root joins, or that error itself.
func pruneFailures(err error) []error {
	var je *jobstore.Error
	if err == nil {
		return nil
	}
	if errors.As(err, &je) {
		if joined, ok := je.Err.(interface{ Unwrap() []error }); ok {
			return joined.Unwrap()
		}
	}
	return []error{err}
}

// printRemoval prints out as JSON, or as a line per job and a summary line
// (which, if what is not "", says which jobs were looked at).
func printRemoval(e *env, asJSON bool, out removeJSON, what string) error {
	if asJSON {
		return jobview.WriteJSON(e.stdout, out)
	}
	tw := newTableWriter(e.stdout)
	for _, j := range out.Jobs {
		verb := map[string]string{outcomeRemoved: "removed", outcomeWouldRemove: "would remove", outcomeRefused: "refused", outcomeFailed: "error"}[j.Outcome]
		detail := ""
		switch {
		case j.err != nil:
			detail = termtext.OneLine(remedy.ErrorLine(j.err))
		case j.State != nil && j.FinishedAt != nil:
			detail = *j.State + ", finished " + *j.FinishedAt
		case j.unknown != "":
			detail = j.unknown
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", verb, termtext.EscapeTerminal(j.ID), termtext.EscapeTerminal(detail))
	}
	tw.Flush()
	var b strings.Builder
	if out.DryRun {
		fmt.Fprintf(&b, "would remove %s", termtext.Plural(out.WouldRemove, "job"))
	} else {
		fmt.Fprintf(&b, "removed %s", termtext.Plural(out.Removed, "job"))
	}
	if what != "" && out.Root != "" {
		fmt.Fprintf(&b, " %s under %s", what, out.Root)
	}
	if out.Refused > 0 {
		fmt.Fprintf(&b, ", %d refused", out.Refused)
	}
	if out.Failed > 0 {
		fmt.Fprintf(&b, ", %d could not be removed", out.Failed)
	}
	if out.DryRun {
		b.WriteString("; nothing was removed (dry run)")
	}
	fmt.Fprintln(e.stdout, b.String())
	return nil
}

// ageFlag is --older-than: a Go duration, or days ("30d", "1.5d",
// "2d12h"), 0 or more.
type ageFlag struct {
	d   time.Duration
	set bool
}

func (a *ageFlag) String() string {
	if a == nil || !a.set {
		return ""
	}
	return a.d.String()
}

// daysRE splits "2d12h" into its days and the rest.
var daysRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)d(.*)$`)

// Type is pflag's name for the value: "value", as the usage text shows it.
func (a *ageFlag) Type() string { return "value" }

func (a *ageFlag) Set(s string) error {
	d, err := parseAge(s)
	if err != nil {
		return err
	}
	a.d, a.set = d, true
	return nil
}

// parseAge reads a duration that may start with a number of days.
func parseAge(s string) (time.Duration, error) {
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("%q is negative: give how long ago a job must have finished", s)
	}
	var days time.Duration
	rest := s
	if m := daysRE.FindStringSubmatch(s); m != nil {
		n, err := strconv.ParseFloat(m[1], 64)
		if err != nil || n*24 > float64(1<<63-1)/float64(time.Hour) {
			return 0, fmt.Errorf("%q: too many days", s)
		}
		days, rest = time.Duration(n*24*float64(time.Hour)), m[2]
	}
	var d time.Duration
	if rest != "" || days == 0 && s != "0d" {
		var err error
		if d, err = time.ParseDuration(rest); err != nil {
			return 0, fmt.Errorf("%q is not a duration: give days (30d), a Go duration (36h, 90m), or both (2d12h)", s)
		}
	}
	switch {
	case d < 0 || days < 0:
		return 0, fmt.Errorf("%q is negative: give how long ago a job must have finished", s)
	case d > 0 && days > time.Duration(1<<63-1)-d:
		return 0, fmt.Errorf("%q: too long", s)
	}
	return days + d, nil
}

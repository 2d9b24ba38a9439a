package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/axqua/jobstore"
)

func listCmd() *command {
	return &command{
		name:    "list",
		args:    "ROOT [--state S] [--kind K] [--label k=v] [--search TEXT] [--limit N] [--oldest|--newest] [--json] [--rebuild] [--watch [--interval 1s]]",
		summary: "list the jobs under ROOT, unreadable ones with their reason",
		doc: `Lists every job directory under ROOT (dot-names skipped), oldest submission
first, in a table:

  ID  KIND  STATE  PROGRESS  UPDATED  AGE  MESSAGE

UPDATED is the status's updated_at (UTC); AGE is the time since submission;
MESSAGE is the runner's latest message, or the error of a failed or lost
job (the column is left out when no job has one). On a terminal the table
is fitted to its width: MESSAGE gets what is left of the line.
A job that may run more than once (submit --max-attempts) or has, says in
STATE which attempt it is at, of how many: "running, attempt 2/3",
"failed, attempt 3/3", and when a pending retry is due: "queued, retry 2/3
at 2026-12-01T10:00:00Z". Attempts its worker interrupted are not counted.
When the job has a cancel request (cancel.json), STATE says so: "running,
cancel requested", "cancelled, on request", "succeeded, cancel requested
too late".
A job whose records cannot be read is listed with STATE "unreadable", and
its reason is printed under the table: one bad job never hides the others.

Filters (the same for --json and --watch; repeat a flag or separate values
with commas for several):
  --state S      queued, running, succeeded, failed, cancelled, lost,
                 unreadable (a record cannot be read) or none (no status
                 yet)
  --kind K       jobs of this kind
  --label k=v    jobs with this label (repeated: all of them)
  --search TEXT  jobs whose ID, kind, submitter, label, message, error or
                 host contains TEXT, in any case
  --limit N      the first N jobs only (a last line counts the others)
  --newest       newest submission first (--oldest, the default: oldest
                 first)

A job directory is a directory that holds job.json. A ROOT that holds
nothing (dot-names and index.json aside) is an empty root: "no jobs under
ROOT", exit 0. A ROOT that holds entries but no job directory is not a
root (a mistyped path, a home directory): it is an error, exit 3.

--rebuild also rewrites ROOT/index.json (the one-file summary for pollers)
from the job directories, which stay authoritative, and says so.

--watch keeps the table current until stopped (Ctrl-C, SIGINT or SIGTERM;
see 'jobstore help watch' for how a watcher stops: the same way). Each job
is followed with Watch (file system events,
one OS watcher for all the jobs; status.json is also read every
--interval, a safety poll for filesystems that give no events), ROOT is
looked at again every --interval for jobs added or removed, and a running
job is looked at 10 times a second for a cancel request. On a terminal the
table is redrawn in place, at most 10 times a second, fitted to the
terminal's width so that no line wraps: where the table is wider, UPDATED,
then AGE, then KIND are left out, then IDs are shortened in their middle
(2026...7g25t3), so that each job's STATE and PROGRESS stay in view; and as
many lines as the terminal has rows (the rest is counted on the last line),
the last saying how to stop, and then that it stopped. Otherwise (a pipe, a
file) the table is printed once, then a line per change:

  ID  STATE  PROGRESS  seq N  MESSAGE
  ID  no status yet
  ID  unreadable: <the reason, as under the table>
  ID  removed

  stopped (SIGINT) watching ROOT

STATE is as in the table (with its cancel note). A new directory without
job.json is shown (as unreadable) only after a second, since Submit
creates the directory a moment before job.json. A terminal too short for
the table shows the running jobs first, then the failed, lost and
unreadable ones, then the queued ones: what is cut is the finished ones.
With filters, a change line is printed for the jobs they choose (and for
a job that no longer matches, once). --watch cannot be combined with
--rebuild.

--watch --json prints one JSON object per line: each job the filters
choose, then {"event": "synced"}, then one per change, then one when
stopped:

  {"event": "job", "job_id": "...", "dir": "ROOT/ID", "spec": ...,
   "status": ..., "error": ..., "cancel": ...}   (as in --json's "jobs")
  {"event": "removed", "job_id": "...", "dir": "ROOT/ID", "spec": null,
   "status": null, "error": null}
  {"event": "synced"}
  {"event": "stopped", "signal": "SIGINT"}

--json prints one JSON object instead of the table:

  {"root": "ROOT",
   "jobs": [{"job_id": "...", "dir": "ROOT/ID",
             "spec": {job.json as read, after any migration} or null,
             "status": {status.json as read} or null,
             "error": null or {"kind": "corrupt", "subject": "...",
                               "message": "...", "remedy": "..."},
             "cancel": {cancel.json as read} (only when it exists)}],
   "index": {"path": ..., "built_at": ..., "jobs": N, "unreadable": N}}

"index" is present only with --rebuild. The keys of "error" are always all
present: "kind" is one of not_job, exists, corrupt, too_large, invalid,
wrong_state, newer_schema, no_migration, locked, cancel_requested,
not_regular, not_owner, not_due, timeout, interrupted, io; "subject" is the field
concerned, or "" when none; "message" is the error as on stderr without its
remedy; "remedy" is what to do. Every --json output reports errors this way. An
error that stops the command (exit 2 or 3) is one line on stderr, with
nothing on stdout.

Exit codes: 0 listed (even if some jobs are unreadable); 2 bad arguments;
3 ROOT cannot be read, holds entries but no job, or index.json cannot be
written; --watch stopped by SIGINT or SIGTERM: ends by that signal (a
shell reports 130 or 143).`,
		run: runList,
	}
}

type listJSON struct {
	Root  string         `json:"root"`
	Jobs  []listJobJSON  `json:"jobs"`
	Index *indexNoteJSON `json:"index,omitempty"`
}

type listJobJSON struct {
	ID     string              `json:"job_id"`
	Dir    string              `json:"dir"`
	Spec   *jobstore.JobSpec   `json:"spec"`
	Status *jobstore.JobStatus `json:"status"`
	Error  *errorJSON          `json:"error"`
	listCancelJSON
}

type indexNoteJSON struct {
	Path       string    `json:"path"`
	BuiltAt    time.Time `json:"built_at"`
	Jobs       int       `json:"jobs"`
	Unreadable int       `json:"unreadable"`
}

func runList(e *env, fs *flag.FlagSet, args []string) error {
	asJSON := fs.Bool("json", false, "print JSON instead of a table (shape in the help text)")
	rebuild := fs.Bool("rebuild", false, "also rewrite ROOT/index.json from the job directories")
	watch := fs.Bool("watch", false, "keep the table current until interrupted")
	interval := fs.Duration("interval", jobstore.DefaultPollInterval, "with --watch: the safety poll, where events do not tell everything (NFS, SMB, FUSE)")
	ff := addFilterFlags(fs)
	pos, err := parseArgs(fs, args, 1, 1, "ROOT")
	if err != nil {
		return err
	}
	if err := checkWatchFlags(fs, args, *watch, *interval); err != nil {
		return err
	}
	filter, err := ff.filter(args)
	if err != nil {
		return err
	}
	root := pos[0]
	if _, err := rootJobDirs("list", root); err != nil {
		return err
	}
	if *watch {
		ctx, release := untilStopped(context.Background())
		defer release()
		if err := watchList(ctx, e, root, *interval, filter, *asJSON); err != nil {
			return err
		}
		if stop := stopCause(ctx); stop != nil {
			return stop
		}
		return nil
	}
	var note *indexNoteJSON
	if *rebuild {
		ix, err := jobstore.RebuildIndex(root)
		if err != nil {
			return withCLIRemedy(err, "give this user write access to ROOT, or list without --rebuild")
		}
		note = &indexNoteJSON{Path: filepath.Join(root, jobstore.IndexFile), BuiltAt: ix.BuiltAt,
			Jobs: len(ix.Jobs), Unreadable: len(ix.Unreadable)}
	}
	entries, err := jobstore.List(root)
	if err != nil {
		return err
	}
	all := len(entries)
	entries, matched := filter.apply(entries)
	if *asJSON {
		out := newListJSON(root, entries, func(dir jobstore.JobDir) *jobstore.CancelRequest {
			c, _ := readCancel(dir)
			return c
		})
		out.Index = note
		return writeJSON(e.stdout, out)
	}
	if len(entries) == 0 && all > 0 {
		fmt.Fprintf(e.stdout, "no jobs under %s match (%s in all)\n", root, plural(all, "job"))
	} else {
		printTable(e, root, entries, time.Now())
	}
	if matched > len(entries) {
		fmt.Fprintf(e.stdout, "\n%d more not shown (--limit %d)\n", matched-len(entries), filter.limit)
	}
	if note != nil {
		fmt.Fprintf(e.stdout, "\n%s rebuilt at %s: %s, %d unreadable\n",
			note.Path, fmtTime(note.BuiltAt), plural(note.Jobs, "job"), note.Unreadable)
	}
	return nil
}

// newListJSON is entries as list --json prints them, each job's cancel
// request from cancelOf.
func newListJSON(root string, entries []jobstore.Entry, cancelOf func(jobstore.JobDir) *jobstore.CancelRequest) listJSON {
	out := listJSON{Root: root, Jobs: []listJobJSON{}}
	for _, en := range entries {
		out.Jobs = append(out.Jobs, listJobJSON{ID: en.Dir.ID(), Dir: string(en.Dir),
			Spec: en.Spec, Status: en.Status, Error: newErrorJSON(en.Err), listCancelJSON: listCancelJSON{cancelOf(en.Dir)}})
	}
	return out
}

// checkWatchFlags refuses the flags that do not go with --watch, and
// --interval without it.
func checkWatchFlags(fs *flag.FlagSet, args []string, watch bool, interval time.Duration) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case !watch && set["interval"]:
		return usagef("%s applies only with --watch", flagSpelling(args, "interval"))
	case watch && set["rebuild"]:
		return usagef("%s cannot be combined with %s", flagSpelling(args, "watch"), flagSpelling(args, "rebuild"))
	}
	return positiveDuration(flagSpelling(args, "interval"), interval)
}

// printTable prints entries as the list table, then the reasons of the
// unreadable ones. now is the reference for AGE.
// On a terminal the table is fitted to its width (fitTable): the
// MESSAGE column is cut to what is left of the line.
func printTable(e *env, root string, entries []jobstore.Entry, now time.Time) {
	if e.width == nil || len(entries) == 0 {
		writeTable(e.stdout, root, entries, now, readCancel)
		return
	}
	for _, l := range fitTable(tableRows(entries, now, readCancel), max(e.width()-1, 0)) {
		fmt.Fprintln(e.stdout, l)
	}
	writeUnreadable(e.stdout, entries)
}

// writeTable is printTable to w, with each job's cancel request from
// cancelOf (readCancel, or what list --watch knows).
func writeTable(w io.Writer, root string, entries []jobstore.Entry, now time.Time,
	cancelOf func(jobstore.JobDir) (*jobstore.CancelRequest, recordInfo)) {
	if len(entries) == 0 {
		fmt.Fprintf(w, "no jobs under %s\n", root)
		return
	}
	rows := tableRows(entries, now, cancelOf)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	header := tableHeader()
	n := tableCols
	if !hasMessages(rows) {
		n = colMessage
	}
	fmt.Fprintln(tw, strings.Join(header[:n], "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.TrimRight(strings.Join(r[:n], "\t"), "\t"))
	}
	tw.Flush()
	writeUnreadable(w, entries)
}

// The columns of the list table.
const (
	colID = iota
	colKind
	colState
	colProgress
	colUpdated
	colAge
	colMessage // the runner's message, or the error of a failed or lost job
	tableCols
)

// tableHeader names the columns of the list table.
func tableHeader() [tableCols]string {
	return [tableCols]string{"ID", "KIND", "STATE", "PROGRESS", "UPDATED", "AGE", "MESSAGE"}
}

// hasMessages reports whether any row has a message: without one, the
// table has no MESSAGE column.
func hasMessages(rows [][tableCols]string) bool {
	for _, r := range rows {
		if r[colMessage] != "" {
			return true
		}
	}
	return false
}

// tableRows are entries as the cells of the list table; now is the
// reference for AGE.
func tableRows(entries []jobstore.Entry, now time.Time,
	cancelOf func(jobstore.JobDir) (*jobstore.CancelRequest, recordInfo)) [][tableCols]string {
	rows := make([][tableCols]string, 0, len(entries))
	for _, en := range entries {
		kind, state, progress, updated, age, msg := "?", "-", "-", "-", "-", ""
		if en.Spec != nil {
			kind = en.Spec.Kind
			age = fmtAge(now.Sub(en.Spec.SubmittedAt))
		}
		if st := en.Status; st != nil {
			state, progress, updated, msg = string(st.State), fmtProgress(st.Progress), fmtTime(st.UpdatedAt), st.Message
			if st.Error != "" && (st.State == jobstore.Failed || st.State == jobstore.Lost) {
				msg = st.Error
			}
		}
		if note := attemptNote(en.Spec, en.Status); note != "" {
			state += ", " + note
		}
		c, info := cancelOf(en.Dir)
		if note := cancelNote(c, info, en.Status); note != "" {
			state += ", " + note
		}
		if en.Err != nil {
			state, msg = "unreadable", "" // the reason is under the table
		}
		row := [tableCols]string{en.Dir.ID(), kind, state, progress, updated, age, msg}
		for c := range row {
			row[c] = escapeTerminal(oneLine(row[c])) // a tab or newline would break the table too
		}
		rows = append(rows, row)
	}
	return rows
}

// writeUnreadable prints, under the table, why each unreadable job is.
func writeUnreadable(w io.Writer, entries []jobstore.Entry) {
	var bad []jobstore.Entry
	for _, en := range entries {
		if en.Err != nil {
			bad = append(bad, en)
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(w, "\n%d unreadable (the job directory is authoritative: fix or remove it):\n", len(bad))
		for _, en := range bad {
			fmt.Fprintf(w, "  %s: %s\n", escapeTerminal(en.Dir.ID()), escapeTerminal(oneLine(errorLine(en.Err))))
		}
	}
}

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
	"github.com/spf13/pflag"
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
A queued job not yet due says when in STATE: "queued, due in 2h" (its
not_before), "queued, retrying in 30s" (a failed attempt's backoff), and
its priority when not 0: "queued, priority 5".
A job that may run more than once (submit --max-attempts) or has, says in
STATE which attempt it is at, of how many: "running, attempt 2/3",
"failed, attempt 3/3", "queued, retrying in 30s, attempt 2/3". Attempts
its worker interrupted are not counted.
When the job has a cancel request (cancel.json), STATE says so: "running,
cancel requested", "cancelled, on request", "succeeded, cancel requested
too late".
A job whose records cannot be read is listed with STATE "unreadable", and
its reason is printed under the table: one bad job never hides the others.

Filters (the same for --json and --watch; repeat a flag or separate values
with commas for several):
  --state S      queued, running, succeeded, failed, cancelled, lost,
                 unreadable (a record cannot be read) or none (no status
                 yet); scheduled (queued, its not_before not reached) or
                 retrying (queued, a failed attempt's retry pending)
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

--watch keeps the table current until stopped (Ctrl-C, SIGINT or SIGTERM,
as 'jobstore help watch' says), from file system events, with a safety
poll every --interval. On a terminal the table is redrawn in place, fitted
to its size (UPDATED, AGE and KIND go first, so that STATE and PROGRESS
stay in view); otherwise it is printed once, then a line per change:

  ID  STATE  PROGRESS  seq N  MESSAGE
  ID  no status yet
  ID  unreadable: <the reason, as under the table>
  ID  removed

  stopped (SIGINT) watching ROOT

With filters, a change line is printed for the jobs they choose (and for
a job that no longer matches, once). --watch cannot be combined with
--rebuild. How the terminal's table is fitted, and when a new job shows:
docs/cli.md.

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
             "due_at": "..." and "retrying": true (only for a queued
                     job with a not_before or a pending retry: when it
                     may start, and whether the retry's backoff says so),
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
		minPos: 1, maxPos: 1, posNames: "ROOT",
		define: defineList,
	}
}

// listOptions are what "jobstore list" is told: ROOT and its flags.
type listOptions struct {
	Root     string
	JSON     bool               // print JSON instead of a table
	Rebuild  bool               // also rewrite ROOT/index.json
	Watch    bool               // keep the table current until stopped
	Interval time.Duration      // with Watch: the safety poll
	Filter   *jobview.JobFilter // the jobs to list; never nil
}

func defineList(fs *pflag.FlagSet) runFunc {
	var opts listOptions
	fs.BoolVar(&opts.JSON, "json", false, "print JSON instead of a table (shape in the help text)")
	fs.BoolVar(&opts.Rebuild, "rebuild", false, "also rewrite ROOT/index.json from the job directories")
	fs.BoolVar(&opts.Watch, "watch", false, "keep the table current until interrupted")
	fs.DurationVar(&opts.Interval, "interval", jobstore.DefaultPollInterval, "with --watch: the safety poll, where events do not tell everything (NFS, SMB, FUSE)")
	ff := addFilterFlags(fs)
	return func(e *env, args, pos []string) error {
		if err := checkWatchFlags(fs, args, opts.Watch, opts.Interval); err != nil {
			return err
		}
		filter, err := ff.filter(args)
		if err != nil {
			return err
		}
		opts.Root, opts.Filter = pos[0], filter
		return runList(e, opts)
	}
}

// runList prints the jobs under opts.Root that opts.Filter chooses, as a
// table or JSON, or keeps the table current (opts.Watch) until a stop
// signal arrives, which it then returns.
func runList(e *env, opts listOptions) error {
	root, filter := opts.Root, opts.Filter
	if _, err := jobview.RootJobDirs("list", root); err != nil {
		return err
	}
	if opts.Watch {
		ctx, release := untilStopped(context.Background())
		defer release()
		if err := watchList(ctx, e, root, opts.Interval, filter, opts.JSON); err != nil {
			return err
		}
		if stop := stopCause(ctx); stop != nil {
			return stop
		}
		return nil
	}
	var note *jobview.IndexNoteJSON
	if opts.Rebuild {
		ix, err := jobstore.RebuildIndex(root)
		if err != nil {
			return remedy.WithCLIRemedy(err, "give this user write access to ROOT, or list without --rebuild")
		}
		note = &jobview.IndexNoteJSON{Path: filepath.Join(root, jobstore.IndexFile), BuiltAt: ix.BuiltAt,
			Jobs: len(ix.Jobs), Unreadable: len(ix.Unreadable)}
	}
	entries, err := jobstore.List(root)
	if err != nil {
		return err
	}
	all := len(entries)
	for _, note := range unknownKinds(filter, root, entries, false) {
		fmt.Fprintf(e.stderr, "jobstore list: %s\n", termtext.EscapeTerminal(note))
	}
	entries, matched := filter.Apply(entries)
	if opts.JSON {
		out := jobview.NewListJSON(root, entries, func(dir jobstore.JobDir) *jobstore.CancelRequest {
			c, _ := jobview.ReadCancel(dir)
			return c
		})
		out.Index = note
		return jobview.WriteJSON(e.stdout, out)
	}
	if len(entries) == 0 && all > 0 {
		fmt.Fprintf(e.stdout, "no jobs under %s match (%s in all)\n", root, termtext.Plural(all, "job"))
	} else {
		printTable(e, root, entries, time.Now())
	}
	if matched > len(entries) {
		fmt.Fprintf(e.stdout, "\n%d more not shown (--limit %d)\n", matched-len(entries), filter.Limit)
	}
	if note != nil {
		fmt.Fprintf(e.stdout, "\n%s rebuilt at %s: %s, %d unreadable\n",
			note.Path, jobview.FmtTime(note.BuiltAt), termtext.Plural(note.Jobs, "job"), note.Unreadable)
	}
	return nil
}

// checkWatchFlags refuses the flags that do not go with --watch, and
// --interval without it.
func checkWatchFlags(fs *pflag.FlagSet, args []string, watch bool, interval time.Duration) error {
	set := map[string]bool{}
	fs.Visit(func(f *pflag.Flag) { set[f.Name] = true })
	switch {
	case !watch && set["interval"]:
		return remedy.Usagef("%s applies only with --watch", flagSpelling(args, "interval"))
	case watch && set["rebuild"]:
		return remedy.Usagef("%s cannot be combined with %s", flagSpelling(args, "watch"), flagSpelling(args, "rebuild"))
	}
	return positiveDuration(flagSpelling(args, "interval"), interval)
}

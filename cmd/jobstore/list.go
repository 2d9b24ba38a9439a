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
		doc: `Lists the jobs under ROOT (its directories that hold a job.json), oldest
submission first, in a table:

  ID  KIND  STATE  PROGRESS  UPDATED  AGE  MESSAGE

STATE says more where there is more to say: "queued, due in 2h, priority 5",
"failed, attempt 3/3", "running, cancel requested". A job whose records
cannot be read is listed as "unreadable", with the reason under the table.
The filters (--state, --kind, --label, --search, --limit) choose the jobs of
--json and --watch too; repeat a flag, or separate values with commas.

Examples:
  jobstore list /srv/jobs
  jobstore list /srv/jobs --state failed,lost --kind render
  jobstore list /srv/jobs --watch

--watch keeps the table current until stopped (Ctrl-C): redrawn in place on
a terminal, else printed once, then a line per change. --rebuild also
rewrites ROOT/index.json. --json prints one object, {"root", "jobs":
[{"job_id", "dir", "spec", "status", "error", ...}]}; "error" is null or
{"kind", "subject", "message", "remedy"}, every key present:
"kind" is one of not_job, exists, corrupt, too_large, invalid, wrong_state,
newer_schema, no_migration, locked, cancel_requested, not_regular, not_owner,
not_due, timeout, interrupted, io; "message" is the error without its remedy.

Exit codes: 0 listed (even with unreadable jobs, or none); 2 bad arguments;
3 ROOT cannot be read, holds entries but no job, or index.json cannot be
written; --watch stopped by SIGINT or SIGTERM: ends by that signal.
Details: docs/cli.md#list`,
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
	fs.BoolVar(&opts.JSON, "json", false, "print JSON instead of a table (shape in docs/cli.md)")
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

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/axqua/jobstore"
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
	dueJSON
	listCancelJSON
}

type indexNoteJSON struct {
	Path       string    `json:"path"`
	BuiltAt    time.Time `json:"built_at"`
	Jobs       int       `json:"jobs"`
	Unreadable int       `json:"unreadable"`
}

func defineList(fs *pflag.FlagSet) runFunc {
	asJSON := fs.Bool("json", false, "print JSON instead of a table (shape in docs/cli.md)")
	rebuild := fs.Bool("rebuild", false, "also rewrite ROOT/index.json from the job directories")
	watch := fs.Bool("watch", false, "keep the table current until interrupted")
	interval := fs.Duration("interval", jobstore.DefaultPollInterval, "with --watch: the safety poll, where events do not tell everything (NFS, SMB, FUSE)")
	ff := addFilterFlags(fs)
	return func(e *env, args, pos []string) error {
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
		for _, note := range filter.unknownKinds(root, entries, false) {
			fmt.Fprintf(e.stderr, "jobstore list: %s\n", escapeTerminal(note))
		}
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
}

// newListJSON is entries as list --json prints them, each job's cancel
// request from cancelOf.
func newListJSON(root string, entries []jobstore.Entry, cancelOf func(jobstore.JobDir) *jobstore.CancelRequest) listJSON {
	out := listJSON{Root: root, Jobs: []listJobJSON{}}
	for _, en := range entries {
		out.Jobs = append(out.Jobs, listJobJSON{ID: en.Dir.ID(), Dir: string(en.Dir),
			Spec: en.Spec, Status: en.Status, Error: newErrorJSON(en.Err), dueJSON: newDueJSON(en.Spec, en.Status),
			listCancelJSON: listCancelJSON{cancelOf(en.Dir)}})
	}
	return out
}

// checkWatchFlags refuses the flags that do not go with --watch, and
// --interval without it.
func checkWatchFlags(fs *pflag.FlagSet, args []string, watch bool, interval time.Duration) error {
	set := map[string]bool{}
	fs.Visit(func(f *pflag.Flag) { set[f.Name] = true })
	switch {
	case !watch && set["interval"]:
		return usagef("%s applies only with --watch", flagSpelling(args, "interval"))
	case watch && set["rebuild"]:
		return usagef("%s cannot be combined with %s", flagSpelling(args, "watch"), flagSpelling(args, "rebuild"))
	}
	return positiveDuration(flagSpelling(args, "interval"), interval)
}

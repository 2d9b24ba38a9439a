package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/axqua/jobstore"
)

func listCmd() *command {
	return &command{
		name:    "list",
		args:    "ROOT [--json] [--rebuild]",
		summary: "list the jobs under ROOT, unreadable ones with their reason",
		doc: `Lists every job directory under ROOT (dot-names skipped), oldest submission
first, in a table:

  ID  KIND  STATE  PROGRESS  UPDATED  AGE

UPDATED is the status's updated_at (UTC); AGE is the time since submission.
When the job has a cancel request (cancel.json), STATE says so: "running,
cancel requested", "cancelled, on request", "succeeded, cancel requested
too late".
A job whose records cannot be read is listed with STATE "unreadable", and
its reason is printed under the table: one bad job never hides the others.

A job directory is a directory that holds job.json. A ROOT that holds
nothing (dot-names and index.json aside) is an empty root: "no jobs under
ROOT", exit 0. A ROOT that holds entries but no job directory is not a
root (a mistyped path, a home directory): it is an error, exit 3.

--rebuild also rewrites ROOT/index.json (the one-file summary for pollers)
from the job directories, which stay authoritative, and says so.

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
newer_schema, no_migration, locked, io; "subject" is the field concerned,
or "" when none; "message" is the error as on stderr without its remedy;
"remedy" is what to do. Every --json output reports errors this way. An
error that stops the command (exit 2 or 3) is one line on stderr, with
nothing on stdout.

Exit codes: 0 listed (even if some jobs are unreadable); 3 ROOT cannot be
read, holds entries but no job, or index.json cannot be written.`,
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
	pos, err := parseArgs(fs, args, 1, 1, "ROOT")
	if err != nil {
		return err
	}
	root := pos[0]
	if _, err := rootJobDirs("list", root); err != nil {
		return err
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
	if *asJSON {
		out := listJSON{Root: root, Jobs: []listJobJSON{}, Index: note}
		for _, en := range entries {
			c, _ := readCancel(en.Dir)
			out.Jobs = append(out.Jobs, listJobJSON{ID: en.Dir.ID(), Dir: string(en.Dir),
				Spec: en.Spec, Status: en.Status, Error: newErrorJSON(en.Err), listCancelJSON: listCancelJSON{c}})
		}
		return writeJSON(e.stdout, out)
	}
	printTable(e, root, entries, time.Now())
	if note != nil {
		fmt.Fprintf(e.stdout, "\n%s rebuilt at %s: %s, %d unreadable\n",
			note.Path, fmtTime(note.BuiltAt), plural(note.Jobs, "job"), note.Unreadable)
	}
	return nil
}

// printTable prints entries as the list table, then the reasons of the
// unreadable ones. now is the reference for AGE.
func printTable(e *env, root string, entries []jobstore.Entry, now time.Time) {
	if len(entries) == 0 {
		fmt.Fprintf(e.stdout, "no jobs under %s\n", root)
		return
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATE\tPROGRESS\tUPDATED\tAGE")
	var bad []jobstore.Entry
	for _, en := range entries {
		kind, state, progress, updated, age := "?", "-", "-", "-", "-"
		if en.Spec != nil {
			kind = en.Spec.Kind
			age = fmtAge(now.Sub(en.Spec.SubmittedAt))
		}
		if st := en.Status; st != nil {
			state, progress, updated = string(st.State), fmtProgress(st.Progress), fmtTime(st.UpdatedAt)
		}
		c, info := readCancel(en.Dir)
		if note := cancelNote(c, info, en.Status); note != "" {
			state += ", " + note
		}
		if en.Err != nil {
			state = "unreadable"
			bad = append(bad, en)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", en.Dir.ID(), kind, state, progress, updated, age)
	}
	tw.Flush()
	if len(bad) > 0 {
		fmt.Fprintf(e.stdout, "\n%d unreadable (the job directory is authoritative: fix or remove it):\n", len(bad))
		for _, en := range bad {
			fmt.Fprintf(e.stdout, "  %s: %s\n", en.Dir.ID(), oneLine(errorLine(en.Err)))
		}
	}
}

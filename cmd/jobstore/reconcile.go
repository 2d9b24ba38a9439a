package main

import (
	"cmp"
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

func reconcileCmd() *command {
	return &command{
		name:    "reconcile",
		args:    "ROOT [--json]",
		summary: "mark jobs whose runner is gone as lost; sweep stale temp files",
		doc: `Reconciles every job under ROOT (ReconcileAll): a job whose status is
"running" but whose job.lock nobody holds lost its runner (a killed process
releases its lock), so it is marked "lost" with a message naming the last
owner; if the job has a cancel request (cancel.json), it is marked
"cancelled" instead, naming the runner and the request. A job whose lock is
held is left alone, and so is a queued job, unless it has a cancel request:
then it is marked cancelled, as "jobstore cancel" would have. Stale
temp files left by interrupted writers are removed, and so are the
directories an interrupted submit left (a hidden build directory, or a job
directory without job.json holding nothing but stale temp files) or an
interrupted removal left (a hidden .remove-* directory); a live writer's
are not.

Examples:
  jobstore reconcile /srv/jobs
  jobstore reconcile /srv/jobs --json

Prints one line per change:

  lost       ID  <the lost status's message>
  cancelled  ID  <the cancelled status's message>
  swept      ID  <temp file name>
  error      ID  <why this job could not be reconciled>

then a summary line.

--json prints one JSON object instead, with every job reconciled:

  {"root": "ROOT",
   "jobs": [{"job_id": "...", "dir": "ROOT/ID", "marked_lost": true,
             "marked_cancelled": false,
             "message": "<the new status's message, or \"\">",
             "swept": ["<temp file name>", ...], "error": null or {...}}],
   "marked_lost": N, "marked_cancelled": N, "swept": N, "failed": N}

"error" is as in 'jobstore help list'.

Exit codes: 0 done (whether or not anything changed); 1 some jobs could not
be reconciled (listed as "error"); 3 ROOT cannot be read, or holds entries
but no job (nothing is changed then).
Details: docs/cli.md#reconcile`,
		minPos: 1, maxPos: 1, posNames: "ROOT",
		define: defineReconcile,
	}
}

// reconcileJSON is the output of "reconcile --json".
type reconcileJSON struct {
	Root            string             `json:"root"`
	Jobs            []reconcileJobJSON `json:"jobs"`
	MarkedLost      int                `json:"marked_lost"`
	MarkedCancelled int                `json:"marked_cancelled"`
	Swept           int                `json:"swept"`
	Failed          int                `json:"failed"`
}

type reconcileJobJSON struct {
	ID              string            `json:"job_id"`
	Dir             string            `json:"dir"`
	MarkedLost      bool              `json:"marked_lost"`
	MarkedCancelled bool              `json:"marked_cancelled"` // a pending cancel request made it cancelled, not lost
	Message         string            `json:"message"`          // the new status's message; "" when not marked
	Swept           []string          `json:"swept"`            // names of the stale temp files removed
	Error           *remedy.ErrorJSON `json:"error"`
}

// reconcileOptions are what "jobstore reconcile" is told: ROOT and its
// flags.
type reconcileOptions struct {
	Root string
	JSON bool // print JSON instead of lines
}

func defineReconcile(fs *pflag.FlagSet) runFunc {
	var opts reconcileOptions
	fs.BoolVar(&opts.JSON, "json", false, "print JSON instead of lines (shape in the help text)")
	return func(e *env, args, pos []string) error {
		opts.Root = pos[0]
		return runReconcile(e, opts)
	}
}

// runReconcile marks lost the jobs under opts.Root whose runner died and
// sweeps stale temporary files, and says so per job; a job it could not
// reconcile gives exitUnsuccessful.
func runReconcile(e *env, opts reconcileOptions) error {
	if _, err := jobview.RootJobDirs("reconcile", opts.Root); err != nil {
		return err
	}
	results, err := jobstore.ReconcileAll(opts.Root)
	if err != nil {
		return err
	}
	out := reconcileJSON{Root: opts.Root, Jobs: []reconcileJobJSON{}}
	for _, r := range results {
		j := reconcileJobJSON{ID: r.Dir.ID(), Dir: string(r.Dir), MarkedLost: r.Changed, Swept: []string{}, Error: remedy.NewErrorJSON(r.Err)}
		if r.Changed {
			state, msg := jobstore.Lost, "marked lost"
			if st, err := jobstore.ReadStatus(r.Dir); err == nil && st != nil {
				state, msg = st.State, cmp.Or(st.Message, msg)
			}
			j.Message = msg
			if state == jobstore.Cancelled { // a cancel request was pending
				j.MarkedLost, j.MarkedCancelled = false, true
				out.MarkedCancelled++
			} else {
				out.MarkedLost++
			}
		}
		for _, name := range r.Swept {
			out.Swept++
			j.Swept = append(j.Swept, filepath.Base(name))
		}
		if r.Err != nil {
			out.Failed++
		}
		out.Jobs = append(out.Jobs, j)
	}
	if opts.JSON {
		if err := jobview.WriteJSON(e.stdout, out); err != nil {
			return err
		}
	} else {
		printReconcile(e, out, results)
	}
	if out.Failed > 0 {
		return &exitError{code: exitUnsuccessful}
	}
	return nil
}

// printReconcile prints what reconcile did, a line per change, then a
// summary.
func printReconcile(e *env, out reconcileJSON, results []jobstore.ReconcileResult) {
	tw := newTableWriter(e.stdout)
	for i, j := range out.Jobs {
		switch {
		case j.MarkedLost:
			fmt.Fprintf(tw, "lost\t%s\t%s\n", termtext.EscapeTerminal(j.ID), termtext.EscapeTerminal(termtext.OneLine(j.Message)))
		case j.MarkedCancelled:
			fmt.Fprintf(tw, "cancelled\t%s\t%s\n", termtext.EscapeTerminal(j.ID), termtext.EscapeTerminal(termtext.OneLine(j.Message)))
		}
		for _, name := range j.Swept {
			fmt.Fprintf(tw, "swept\t%s\t%s\n", termtext.EscapeTerminal(j.ID), termtext.EscapeTerminal(name))
		}
		if err := results[i].Err; err != nil {
			fmt.Fprintf(tw, "error\t%s\t%s\n", termtext.EscapeTerminal(j.ID), termtext.EscapeTerminal(termtext.OneLine(remedy.ErrorLine(err))))
		}
	}
	tw.Flush()
	marked := fmt.Sprintf("%d marked lost", out.MarkedLost)
	if out.MarkedCancelled > 0 {
		marked += fmt.Sprintf(", %d marked cancelled (their cancel request was pending)", out.MarkedCancelled)
	}
	fmt.Fprintf(e.stdout, "%s: %s, %s removed, %d could not be reconciled\n",
		termtext.Plural(len(out.Jobs), "job"), marked, termtext.Plural(out.Swept, "stale temp file"), out.Failed)
}

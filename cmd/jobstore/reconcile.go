package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"github.com/axqua/jobstore"
)

func reconcileCmd() *command {
	return &command{
		name:    "reconcile",
		args:    "ROOT [--json]",
		summary: "mark jobs whose runner is gone as lost; sweep stale temp files",
		doc: `Reconciles every job under ROOT (ReconcileAll): a job whose status is
"running" but whose job.lock nobody holds lost its runner (a killed process
releases its lock), so it is marked "lost" with a message naming the last
owner; a job whose lock is held, and a queued job, are left alone. Stale
temp files left by interrupted writers are removed; a live writer's are not.

Prints one line per change:

  lost   ID  <the lost status's message>
  swept  ID  <temp file name>
  error  ID  <why this job could not be reconciled>

then a summary line.

--json prints one JSON object instead, with every job reconciled:

  {"root": "ROOT",
   "jobs": [{"job_id": "...", "dir": "ROOT/ID", "marked_lost": true,
             "message": "<the lost status's message, or \"\">",
             "swept": ["<temp file name>", ...], "error": null or {...}}],
   "marked_lost": N, "swept": N, "failed": N}

"error" is as in 'jobstore help list'.

Exit codes: 0 done (whether or not anything changed); 1 some jobs could not
be reconciled (listed as "error"); 3 ROOT cannot be read, or holds entries
but no job (nothing is changed then).`,
		run: runReconcile,
	}
}

// reconcileJSON is the output of "reconcile --json".
type reconcileJSON struct {
	Root       string             `json:"root"`
	Jobs       []reconcileJobJSON `json:"jobs"`
	MarkedLost int                `json:"marked_lost"`
	Swept      int                `json:"swept"`
	Failed     int                `json:"failed"`
}

type reconcileJobJSON struct {
	ID         string     `json:"job_id"`
	Dir        string     `json:"dir"`
	MarkedLost bool       `json:"marked_lost"`
	Message    string     `json:"message"` // the lost status's message; "" when not marked lost
	Swept      []string   `json:"swept"`   // names of the stale temp files removed
	Error      *errorJSON `json:"error"`
}

func runReconcile(e *env, fs *flag.FlagSet, args []string) error {
	asJSON := fs.Bool("json", false, "print JSON instead of lines (shape in the help text)")
	pos, err := parseArgs(fs, args, 1, 1, "ROOT")
	if err != nil {
		return err
	}
	if _, err := rootJobDirs("reconcile", pos[0]); err != nil {
		return err
	}
	results, err := jobstore.ReconcileAll(pos[0])
	if err != nil {
		return err
	}
	out := reconcileJSON{Root: pos[0], Jobs: []reconcileJobJSON{}}
	for _, r := range results {
		j := reconcileJobJSON{ID: r.Dir.ID(), Dir: string(r.Dir), MarkedLost: r.Changed, Swept: []string{}, Error: newErrorJSON(r.Err)}
		if r.Changed {
			out.MarkedLost++
			j.Message = "marked lost"
			if st, err := jobstore.ReadStatus(r.Dir); err == nil && st != nil && st.Message != "" {
				j.Message = st.Message
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
	if *asJSON {
		if err := writeJSON(e.stdout, out); err != nil {
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
	tw := tabwriter.NewWriter(e.stdout, 0, 8, 2, ' ', 0)
	for i, j := range out.Jobs {
		if j.MarkedLost {
			fmt.Fprintf(tw, "lost\t%s\t%s\n", j.ID, oneLine(j.Message))
		}
		for _, name := range j.Swept {
			fmt.Fprintf(tw, "swept\t%s\t%s\n", j.ID, name)
		}
		if err := results[i].Err; err != nil {
			fmt.Fprintf(tw, "error\t%s\t%s\n", j.ID, oneLine(errorLine(err)))
		}
	}
	tw.Flush()
	fmt.Fprintf(e.stdout, "%s: %d marked lost, %s removed, %d could not be reconciled\n",
		plural(len(out.Jobs), "job"), out.MarkedLost, plural(out.Swept, "stale temp file"), out.Failed)
}

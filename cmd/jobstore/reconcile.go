package main

import (
	"cmp"
	"flag"
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"github.com/axqua/jobstore"
)

func reconcileCmd() *command {
	return &command{
		name:    "reconcile",
		args:    "ROOT",
		summary: "mark jobs whose runner is gone as lost; sweep stale temp files",
		doc: `Reconciles every job under ROOT (ReconcileAll): a job whose status is
"running" but whose job.lock nobody holds lost its runner (a killed process
releases its lock), so it is marked "lost" with a message naming the last
owner; if the job has a cancel request (cancel.json), it is marked
"cancelled" instead, naming the runner and the request. A job whose lock is
held is left alone, and so is a queued job, unless it has a cancel request:
then it is marked cancelled, as "jobstore cancel" would have. Stale
temp files left by interrupted writers are removed; a live writer's are not.

Prints one line per change:

  lost       ID  <the lost status's message>
  cancelled  ID  <the cancelled status's message>
  swept      ID  <temp file name>
  error      ID  <why this job could not be reconciled>

then a summary line.

Exit codes: 0 done (whether or not anything changed); 1 some jobs could not
be reconciled (listed as "error"); 3 ROOT cannot be read.`,
		run: runReconcile,
	}
}

func runReconcile(e *env, fs *flag.FlagSet, args []string) error {
	pos, err := parseArgs(fs, args, 1, 1, "ROOT")
	if err != nil {
		return err
	}
	results, err := jobstore.ReconcileAll(pos[0])
	if err != nil {
		return err
	}
	var lost, cancelled, swept, failed int
	tw := tabwriter.NewWriter(e.stdout, 0, 8, 2, ' ', 0)
	for _, r := range results {
		id := r.Dir.ID()
		if r.Changed {
			state, msg := jobstore.Lost, "marked lost"
			if st, err := jobstore.ReadStatus(r.Dir); err == nil && st != nil {
				state, msg = st.State, cmp.Or(st.Message, msg)
			}
			if state == jobstore.Cancelled { // a cancel request was pending
				cancelled++
			} else {
				lost++
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", state, id, oneLine(msg))
		}
		for _, name := range r.Swept {
			swept++
			fmt.Fprintf(tw, "swept\t%s\t%s\n", id, filepath.Base(name))
		}
		if r.Err != nil {
			failed++
			fmt.Fprintf(tw, "error\t%s\t%s\n", id, oneLine(errorLine(r.Err)))
		}
	}
	tw.Flush()
	marked := fmt.Sprintf("%d marked lost", lost)
	if cancelled > 0 {
		marked += fmt.Sprintf(", %d marked cancelled (their cancel request was pending)", cancelled)
	}
	fmt.Fprintf(e.stdout, "%s: %s, %s removed, %d could not be reconciled\n",
		plural(len(results), "job"), marked, plural(swept, "stale temp file"), failed)
	if failed > 0 {
		return &exitError{code: exitUnsuccessful}
	}
	return nil
}

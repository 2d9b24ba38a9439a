package main

import (
	"fmt"
	"strings"

	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
	"github.com/spf13/pflag"
)

// exitCodesText is the exit code table, shown by "jobstore help" and in the
// README.
const exitCodesText = `Exit codes:
  0  success (wait: the job succeeded)
  1  watch: the job ended failed, cancelled or lost; wait: it failed;
     check, reconcile: problems were found (listed on stdout)
     cancel: the job had already ended (nothing written)
     retry: the job is queued, running or succeeded (nothing written)
     rm: a job was refused (not finished, or held by a process);
     prune: a finished job could not be removed;
     work --until-empty: a job it ran did not succeed
  2  usage error: unknown command, missing or extra argument, bad flag
  3  runtime error: not a job, a root that holds no job, a record
     unreadable or unwritable, ...
  4  wait: the job was cancelled
  5  wait: the job was lost
  6  wait: --timeout passed before the job ended
  7  work: COMMAND cannot run jobs (it cannot be started, or jobs fail
     fast: see 'jobstore help work'); the worker took no more
  watch and list --watch stopped by SIGINT (Ctrl-C) or SIGTERM end by
  that signal, after a last line that says so: a shell reports 130 or 143;
  so does work, once its running jobs have ended
Errors are printed to stderr as one line that ends with "Remedy: ...".
`

// usageText is "jobstore help": what jobstore is, its commands and exit
// codes, wrapped to width.
func usageText(width int) string {
	var b strings.Builder
	b.WriteString(`jobstore keeps job records on disk safely: job.json is written once,
status.json is rewritten atomically by the runner (which holds job.lock) and
polled by anyone else. A job is a directory ROOT/ID.

Usage:
  jobstore COMMAND [ARGUMENTS] [FLAGS]   (flags may come before or after arguments)
  jobstore help COMMAND                   (or: jobstore COMMAND --help)
  jobstore --version                      (module version and VCS revision)

Commands:
`)
	tw := newTableWriter(&b)
	for _, c := range commands() {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
	b.WriteString("\nRun 'jobstore help COMMAND' for its arguments, flags, output and exit codes.\n")
	b.WriteString("check, list, prune, reconcile, rm, show, wait, watch, work: --json prints JSON.\n\n")
	b.WriteString(exitCodesText)
	return wrapText(b.String(), width)
}

// usage is "jobstore help CMD": synopsis, description, flags, wrapped to
// width; the synopsis goes on under the command's name.
func (c *command) usage(width int) string {
	var b strings.Builder
	synopsis := "Usage: jobstore " + c.name + " "
	b.WriteString(wrapLineAt(synopsis+c.args, width, termtext.Cells(synopsis)) + "\n\n")
	fmt.Fprintf(&b, "%s\n", strings.TrimSpace(c.doc))
	fs := pflag.NewFlagSet(c.name, pflag.ContinueOnError)
	c.define(fs) // the flags shown are the ones the command defines
	if fs.HasFlags() {
		b.WriteString("\nFlags:\n")
		tw := newTableWriter(&b)
		fs.VisitAll(func(f *pflag.Flag) {
			name, text := pflag.UnquoteUsage(f)
			arg := "--" + f.Name
			if name != "" {
				arg += " " + name
			}
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" {
				text += " (default " + f.DefValue + ")"
			}
			fmt.Fprintf(tw, "  %s\t%s\n", arg, text)
		})
		tw.Flush()
	}
	return wrapText(b.String(), width)
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/axqua/jobstore"
)

func watchCmd() *command {
	return &command{
		name:    "watch",
		args:    "DIR [--interval 1s]",
		summary: "poll a job's status.json and draw its progress until it ends",
		doc: `Polls DIR/status.json with ReadStatus every --interval, as a GUI would, and
draws the job's state, a progress bar, its seq and message:

  running   [########------------]  40%  seq 14   frame 12/30

On a terminal the line is redrawn in place ('\r'); otherwise (a pipe, a file)
a line is printed each time the status changes. When the job reaches a
terminal state, a last line says how it ended, with the runner's error and
remedy if it failed.

A status that cannot be read for a moment (corrupt after the reader's
retries, missing, busy) does not end the watch: a note is printed and polling
goes on. A status written by a newer jobstore does end it (exit 3), since
polling again cannot help.

Exit codes: 0 the job succeeded; 1 it failed, was cancelled or was lost;
2 bad arguments; 3 DIR is not a job (or a record this jobstore cannot read).`,
		run: runWatch,
	}
}

func runWatch(e *env, fs *flag.FlagSet, args []string) error {
	interval := fs.Duration("interval", time.Second, "time between two reads of status.json")
	pos, err := parseArgs(fs, args, 1, 1, "DIR")
	if err != nil {
		return err
	}
	if err := positiveDuration("interval", *interval); err != nil {
		return err
	}
	st, err := newWatcher(e.stdout, e.tty).watch(context.Background(), jobstore.JobDir(pos[0]), *interval)
	if err != nil {
		return err
	}
	if st.State != jobstore.Succeeded {
		return &exitError{code: exitUnsuccessful}
	}
	return nil
}

// ttyLineWidth keeps a redrawn line from wrapping on a narrow terminal: a
// wrapped line cannot be redrawn with '\r'.
const ttyLineWidth = 79

// watcher draws a job's progress from successive statuses.
type watcher struct {
	out   io.Writer
	tty   bool
	drawn int    // runes of the line on screen (tty), blanked by the next redraw
	last  string // last line printed (plain output prints changes only)
	note  string // last note printed, not repeated while it holds
	// cancelShown: the job's cancel request has been noted
	cancelShown bool
}

func newWatcher(out io.Writer, tty bool) *watcher { return &watcher{out: out, tty: tty} }

// watch polls dir's status every interval until the job is terminal (its
// last status is returned), ctx ends, or the job cannot be watched.
func (w *watcher) watch(ctx context.Context, dir jobstore.JobDir, interval time.Duration) (*jobstore.JobStatus, error) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		st, err := jobstore.ReadStatus(dir)
		switch {
		case err != nil && endsWatch(err):
			w.endLine()
			return nil, err
		case err != nil:
			subject, what, _ := problem(err, jobstore.StatusFile)
			w.notef("%s unreadable for now (%s: %s); still watching", jobstore.StatusFile, subject, what)
		case st == nil:
			w.notef("no %s yet: nothing has run; still watching", jobstore.StatusFile)
		default:
			w.draw(st)
			if !w.cancelShown && !st.State.Terminal() {
				if c, info := readCancel(dir); info.Present || info.Err != nil {
					w.cancelShown = true
					w.notef("%s %s; waiting for the runner to stop", cancelNote(c, info, st), requestTextOrNone(c))
				}
			}
			if st.State.Terminal() {
				w.endLine()
				fmt.Fprintln(w.out, outcomeLine(dir.ID(), st))
				return st, nil
			}
		}
		select {
		case <-ctx.Done():
			w.endLine()
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// endsWatch: errors that polling again cannot cure.
func endsWatch(err error) bool {
	return errors.Is(err, jobstore.ErrNotJob) || errors.Is(err, jobstore.ErrNewerSchema) ||
		errors.Is(err, jobstore.ErrNoMigration)
}

// statusLine is one status as watch draws it.
func statusLine(st *jobstore.JobStatus) string {
	return strings.TrimRight(fmt.Sprintf("%-9s %s %4s  seq %-4d %s",
		st.State, progressBar(st.Progress), fmtProgress(st.Progress), st.Seq, oneLine(st.Message)), " ")
}

func (w *watcher) draw(st *jobstore.JobStatus) {
	w.note = ""
	line := statusLine(st)
	if !w.tty {
		if line != w.last {
			fmt.Fprintln(w.out, line)
		}
		w.last = line
		return
	}
	line = truncate(line, ttyLineWidth)
	n := utf8.RuneCountInString(line)
	fmt.Fprint(w.out, "\r"+line+strings.Repeat(" ", max(w.drawn-n, 0)))
	w.drawn = n
	w.last = line
}

// notef prints a note on its own line, once while it holds.
func (w *watcher) notef(format string, args ...any) {
	note := oneLine(fmt.Sprintf(format, args...))
	if note == w.note {
		return
	}
	w.note = note
	w.endLine()
	fmt.Fprintln(w.out, note)
	w.last = ""
}

// endLine ends the line being redrawn, if any.
func (w *watcher) endLine() {
	if w.tty && w.drawn > 0 {
		fmt.Fprintln(w.out)
		w.drawn = 0
	}
}

// outcomeLine says how a job ended.
func outcomeLine(id string, st *jobstore.JobStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %s %s", id, st.State)
	if st.StartedAt != nil && st.FinishedAt != nil {
		fmt.Fprintf(&b, " after %s", fmtAge(st.FinishedAt.Sub(*st.StartedAt)))
	}
	if st.ExitCode != nil {
		fmt.Fprintf(&b, " (exit code %d)", *st.ExitCode)
	}
	reason := st.Error
	if reason == "" {
		reason = st.Message
	}
	if reason != "" {
		b.WriteString(": " + reason)
	}
	if st.Remedy != "" {
		b.WriteString(". Remedy: " + st.Remedy)
	}
	return oneLine(b.String())
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/axqua/jobstore"
)

func watchCmd() *command {
	return &command{
		name:    "watch",
		args:    "DIR [--interval 1s] [--json]",
		summary: "poll a job's status.json and draw its progress until it ends",
		doc: `Polls DIR/status.json with ReadStatus every --interval, as a GUI would, and
draws the job's state, a progress bar, its seq and message:

  running   [########------------]  40%  seq 14   frame 12/30

On a terminal the line is redrawn in place ('\r') and sized to the
terminal's width, read again at each redraw, so that it never wraps: it
stops short of the last column, a narrow terminal gets a shorter bar or
none, and the message is cut with "...". Otherwise (a pipe, a file) a line
is printed, uncut, each time the status changes. When the job reaches a
terminal state, a last line says how it ended, with the runner's error and
remedy if it failed.

--json prints one JSON object per line instead, each time the status
changes or a note is due, and never redraws:

  {"event": "status", "job_id": "...", "status": {status.json as read},
   "message": "<the line the text output prints>", "error": null}

"event" is "status"; "note" (status.json unreadable for now, or absent:
"status" is null, "error" says why or is null); or "end", the last line
("message" says how the job ended). Every key is always present; "error"
is null or an object as in 'jobstore help list'.

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
	asJSON := fs.Bool("json", false, "print one JSON object per line (shape in the help text)")
	pos, err := parseArgs(fs, args, 1, 1, "DIR")
	if err != nil {
		return err
	}
	if err := positiveDuration(flagSpelling(args, "interval"), *interval); err != nil {
		return err
	}
	w := newWatcher(e.stdout, e.width)
	if *asJSON {
		w.width, w.asJSON = nil, true
	}
	st, err := w.watch(context.Background(), jobstore.JobDir(pos[0]), *interval)
	if err != nil {
		return err
	}
	if st.State != jobstore.Succeeded {
		return &exitError{code: exitUnsuccessful}
	}
	return nil
}

// watcher draws a job's progress from successive statuses.
type watcher struct {
	out io.Writer
	// width reports the terminal's width in columns; nil when out is not a
	// terminal, and then a line is printed per change instead of redrawn.
	width  func() int
	asJSON bool   // print watchEventJSON lines
	id     string // the job's ID, for JSON events
	drawn  int    // cells of the line on screen (tty), blanked by the next redraw
	last   string // last line printed (plain output prints changes only)
	note   string // last note printed, not repeated while it holds
	// cancelShown: the job's cancel request has been noted
	cancelShown bool
}

// newWatcher returns a watcher that writes to out: redrawing one line sized
// by width when width is non-nil, a line per change otherwise.
func newWatcher(out io.Writer, width func() int) *watcher {
	return &watcher{out: out, width: width}
}

// watchEventJSON is one line of "watch --json".
type watchEventJSON struct {
	Event   string              `json:"event"` // status, note or end
	ID      string              `json:"job_id"`
	Status  *jobstore.JobStatus `json:"status"`  // the status read (status, end), or null
	Message string              `json:"message"` // the line the text output prints
	Error   *errorJSON          `json:"error"`   // why status.json is unreadable for now (note), or null
}

// watch polls dir's status every interval until the job is terminal (its
// last status is returned), ctx ends, or the job cannot be watched.
func (w *watcher) watch(ctx context.Context, dir jobstore.JobDir, interval time.Duration) (*jobstore.JobStatus, error) {
	w.id = dir.ID()
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
			w.noteErr(err, "%s unreadable for now (%s: %s); still watching", jobstore.StatusFile, subject, what)
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
				w.end(st)
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

// statusLine is one status as watch prints it when the output is not a
// terminal (the whole message, however long).
func statusLine(st *jobstore.JobStatus) string {
	return strings.TrimRight(fmt.Sprintf("%-9s %s %4s  seq %-4d %s",
		st.State, progressBar(st.Progress), fmtProgress(st.Progress), st.Seq, oneLine(st.Message)), " ")
}

func (w *watcher) draw(st *jobstore.JobStatus) {
	w.note = ""
	if w.width == nil {
		line := statusLine(st)
		if w.asJSON {
			line = w.eventLine("status", st, statusLine(st), nil)
		}
		if line != w.last {
			fmt.Fprintln(w.out, line)
		}
		w.last = line
		return
	}
	cols := w.width()
	line := fitStatusLine(st, cols)
	n := cells(line)
	// Blank what is left of a longer previous line, but never past the
	// last column but one: blanks wrap as well as text does.
	pad := max(min(w.drawn, cols-1)-n, 0)
	fmt.Fprint(w.out, "\r"+line+strings.Repeat(" ", pad))
	w.drawn = n
	w.last = line
}

// eventLine is one "watch --json" line.
func (w *watcher) eventLine(event string, st *jobstore.JobStatus, msg string, err error) string {
	b, merr := json.Marshal(watchEventJSON{Event: event, ID: w.id, Status: st, Message: msg, Error: newErrorJSON(err)})
	if merr != nil { // a status read back by ReadStatus always marshals
		panic(merr)
	}
	return string(b)
}

// notef prints a note on its own line, once while it holds.
func (w *watcher) notef(format string, args ...any) { w.noteErr(nil, format, args...) }

// noteErr is notef for a note caused by err (given in JSON output).
func (w *watcher) noteErr(err error, format string, args ...any) {
	note := oneLine(fmt.Sprintf(format, args...))
	if note == w.note {
		return
	}
	w.note = note
	w.endLine()
	if w.asJSON {
		note = w.eventLine("note", nil, note, err)
	}
	fmt.Fprintln(w.out, note)
	w.last = ""
}

// end prints how the job ended.
func (w *watcher) end(st *jobstore.JobStatus) {
	line := outcomeLine(w.id, st)
	if w.asJSON {
		line = w.eventLine("end", st, line, nil)
	}
	fmt.Fprintln(w.out, line)
}

// endLine ends the line being redrawn, if any.
func (w *watcher) endLine() {
	if w.width != nil && w.drawn > 0 {
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

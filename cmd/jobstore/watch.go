package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

func watchCmd() *command {
	return &command{
		name:    "watch",
		args:    "DIR [--interval 1s] [--json]",
		summary: "follow a job's status.json and draw its progress until it ends",
		doc: `Follows the job in DIR (ROOT/ID) until it ends: draws its state, a progress
bar, its seq and message each time the runner writes its status, then a
last line that says how it ended (with the runner's error and remedy):

  running   [########------------]  40%  seq 14  frame 12/30

Examples:
  jobstore watch /srv/jobs/$ID
  jobstore watch "$ROOT/$ID" && publish    (publishes only if it succeeded)
  jobstore watch /srv/jobs/$ID --json

File system events bring each status at once; status.json is also read every
--interval, for filesystems without events for another host's writes (NFS,
SMB, FUSE). On a terminal the line is redrawn in place, at most 10 times a
second; otherwise a line is printed per status. A cancel request is shown as
soon as it is made. A status unreadable for a moment is a note, not an end.
Stopping the watch (Ctrl-C) leaves the job as it is; the watch then ends by
the signal, never with 0.

--json prints one object per line, {"event", "job_id", "status", "message",
"error"}, "event" one of status, note, cancel, end, stopped.

Exit codes: 0 the job succeeded; 1 it failed, was cancelled or was lost;
2 bad arguments; 3 DIR is not a job (or a record this jobstore cannot read);
stopped by SIGINT or SIGTERM: ends by that signal (a shell reports 130 or 143).
Details: docs/cli.md#watch`,
		minPos: 1, maxPos: 1, posNames: "DIR",
		define: defineWatch,
	}
}

// watchOptions are what "jobstore watch" is told: DIR and its flags.
type watchOptions struct {
	Dir      string        // the job directory as given
	Interval time.Duration // the safety poll between watch events
	JSON     bool          // print one JSON object per change
}

func defineWatch(fs *pflag.FlagSet) runFunc {
	var opts watchOptions
	interval := safetyPollFlag(fs)
	fs.BoolVar(&opts.JSON, "json", false, "print one JSON object per line (shape in docs/cli.md)")
	return func(e *env, args, pos []string) error {
		if err := positiveDuration(flagSpelling(args, "interval"), *interval); err != nil {
			return err
		}
		opts.Dir, opts.Interval = pos[0], *interval
		return runWatch(e, opts)
	}
}

// runWatch follows opts.Dir's job until it ends, redrawn in place on a
// terminal, a line (or JSON object) per change otherwise; a job that does
// not succeed gives exitUnsuccessful, a stop signal itself.
func runWatch(e *env, opts watchOptions) error {
	w := newWatcher(e.stdout, e.term)
	if opts.JSON {
		w.term, w.asJSON = nil, true
	}
	ctx, release := untilStopped(context.Background())
	defer release()
	st, err := w.watch(ctx, jobstore.JobDir(opts.Dir), opts.Interval)
	if stop := stopCause(ctx); err != nil && stop != nil {
		w.stopped(stop.sig)
		return stop
	}
	if err != nil {
		return remedy.JobDirArgument(err, opts.Dir)
	}
	if st.State != jobstore.Succeeded {
		return &exitError{code: exitUnsuccessful}
	}
	return nil
}

// cancelCheckEvery is how often watch (and list --watch) look for a cancel
// request of a job still running: Watch reports statuses only, and a
// request changes no status until the runner acts on it. A look is one
// stat of a name that is usually absent.
const cancelCheckEvery = 100 * time.Millisecond

// watcher draws a job's progress from successive statuses.
type watcher struct {
	out io.Writer
	// term is out's terminal; nil when out is not a terminal, and then a
	// line is printed per change instead of redrawn.
	term   *terminal
	asJSON bool                // print watchEventJSON lines
	id     string              // the job's ID, for JSON events
	drawn  int                 // cells of the line on screen (tty), blanked by the next redraw
	last   string              // last line printed (plain output prints changes only)
	note   string              // last note printed, not repeated while it holds
	seen   *jobstore.JobStatus // the last status received (nil: none yet)
	// cancelShown: the job's cancel request has been noted
	cancelShown bool
}

// newWatcher returns a watcher that writes to out: redrawing one line sized
// to the terminal t when t is non-nil, a line per change otherwise.
func newWatcher(out io.Writer, t *terminal) *watcher {
	return &watcher{out: out, term: t}
}

// watchEventJSON is one line of "watch --json".
type watchEventJSON struct {
	Event   string              `json:"event"` // status, note, cancel, end or stopped
	ID      string              `json:"job_id"`
	Status  *jobstore.JobStatus `json:"status"`  // the status read (status, cancel, end), or null
	Message string              `json:"message"` // the line the text output prints
	Error   *remedy.ErrorJSON   `json:"error"`   // why a record is unreadable (note, cancel), or null
}

// watch follows dir's status with jobstore.Watch (poll is its safety poll)
// until the job is terminal (its last status is returned), ctx ends, or the
// job cannot be watched. On a terminal, redraws are spaced by redrawGap.
func (w *watcher) watch(ctx context.Context, dir jobstore.JobDir, poll time.Duration) (*jobstore.JobStatus, error) {
	w.id = dir.ID()
	ctx, stop := context.WithCancel(ctx)
	defer stop() // releases the Watch when this returns early
	updates, err := jobstore.Watch(ctx, dir, jobstore.WithPollInterval(poll))
	if err != nil {
		return nil, err
	}
	gate := newRedrawGate(redrawGap)
	defer gate.stop()
	cancelTick := time.NewTicker(cancelCheckEvery)
	defer cancelTick.Stop()
	var (
		latest  *jobstore.JobStatus // the last status received (never terminal)
		pending bool                // latest waits to be drawn (terminal only)
	)
	for {
		select {
		case u, ok := <-updates:
			if !ok { // Watch ends by itself only after what returns below
				w.endLine()
				return nil, context.Cause(ctx)
			}
			switch {
			case u.Err != nil && endsWatch(u.Err):
				w.endLine()
				return nil, u.Err
			case u.Err != nil:
				subject, what, _ := remedy.Problem(u.Err, jobstore.StatusFile)
				w.noteErr(u.Err, "%s unreadable for now (%s: %s); still watching", jobstore.StatusFile, subject, what)
			case u.Status == nil:
				w.notef("no %s yet: nothing has run; still watching", jobstore.StatusFile)
			case u.Status.State.Terminal():
				w.seen = u.Status
				w.draw(u.Status) // the last status is always drawn
				w.endLine()
				w.end(u.Status)
				return u.Status, nil
			default:
				latest, w.seen = u.Status, u.Status
				if w.term == nil || gate.ask() {
					w.draw(latest)
					pending = false
				} else {
					pending = true
				}
			}
			w.checkCancel(dir, latest)
		case <-gate.C():
			gate.fired()
			if pending {
				w.draw(latest)
				pending = false
			}
		case <-cancelTick.C:
			w.checkCancel(dir, latest)
		case <-ctx.Done():
			if pending {
				w.draw(latest) // the screen shows the latest when the watch stops
			}
			w.endLine()
			return nil, ctx.Err()
		}
	}
}

// checkCancel notes dir's cancel request, once, if there is one; st is the
// last status received (nil: none yet).
func (w *watcher) checkCancel(dir jobstore.JobDir, st *jobstore.JobStatus) {
	if w.cancelShown {
		return
	}
	if _, err := os.Lstat(dir.CancelPath()); err != nil {
		return // absent (or not to be seen): readCancel would say the same, slower
	}
	c, info := jobview.ReadCancel(dir)
	if !info.Present && info.Err == nil {
		return
	}
	w.cancelShown = true
	note := jobview.CancelNote(c, info, st)
	if text := jobview.RequestTextOrNone(c); text != "" {
		note += " " + text
	}
	note = termtext.OneLine(note + "; waiting for the runner to stop")
	w.endLine()
	if w.asJSON {
		note = w.eventLine("cancel", st, note, info.Err)
	}
	w.println(note)
	w.note, w.last = "", ""
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
		st.State, jobview.ProgressBar(st.Progress), jobview.FmtProgress(st.Progress), st.Seq, termtext.OneLine(st.Message)), " ")
}

func (w *watcher) draw(st *jobstore.JobStatus) {
	w.note = ""
	if w.term == nil {
		line := statusLine(st)
		if w.asJSON {
			line = w.eventLine("status", st, statusLine(st), nil)
		}
		if line != w.last {
			w.println(line)
		}
		w.last = line
		return
	}
	cols := w.term.width()
	line := fitStatusLine(st, cols)
	n := termtext.Cells(line)
	// Blank what is left of a longer previous line, but never past the
	// last column but one: blanks wrap as well as text does.
	pad := max(min(w.drawn, cols-1)-n, 0)
	fmt.Fprint(w.out, "\r"+line+strings.Repeat(" ", pad))
	w.drawn = n
	w.last = line
}

// eventLine is one "watch --json" line.
func (w *watcher) eventLine(event string, st *jobstore.JobStatus, msg string, err error) string {
	b, merr := json.Marshal(watchEventJSON{Event: event, ID: w.id, Status: st, Message: msg, Error: remedy.NewErrorJSON(err)})
	if merr != nil { // a status read back by ReadStatus always marshals
		panic(merr)
	}
	return string(b)
}

// notef prints a note on its own line, once while it holds.
func (w *watcher) notef(format string, args ...any) { w.noteErr(nil, format, args...) }

// noteErr is notef for a note caused by err (given in JSON output).
func (w *watcher) noteErr(err error, format string, args ...any) {
	note := termtext.OneLine(fmt.Sprintf(format, args...))
	if note == w.note {
		return
	}
	w.note = note
	w.endLine()
	if w.asJSON {
		note = w.eventLine("note", nil, note, err)
	}
	w.println(note)
	w.last = ""
}

// stopped prints the last line of a watch stopped by sig: what it last
// saw of the job, which goes on without it.
func (w *watcher) stopped(sig os.Signal) {
	line := fmt.Sprintf("stopped (%s) watching job %s before a status was read", signalName(sig), w.id)
	if st := w.seen; st != nil {
		line = termtext.OneLine(fmt.Sprintf("stopped (%s) watching job %s: it was %s at seq %d, progress %s; the job goes on",
			signalName(sig), w.id, st.State, st.Seq, jobview.FmtProgress(st.Progress)))
	}
	if w.asJSON {
		line = w.eventLine("stopped", w.seen, line, nil)
	}
	w.println(line)
}

// end prints how the job ended.
func (w *watcher) end(st *jobstore.JobStatus) {
	line := outcomeLine(w.id, st)
	if w.asJSON {
		line = w.eventLine("end", st, line, nil)
	}
	w.println(line)
}

// println prints one line of text output escaped for a terminal
// (escapeTerminal), or one JSON line as it is: JSON carries the exact
// strings, its encoding escapes what a terminal would act on.
func (w *watcher) println(line string) {
	if !w.asJSON {
		line = termtext.EscapeTerminal(line)
	}
	fmt.Fprintln(w.out, line)
}

// endLine ends the line being redrawn, if any.
func (w *watcher) endLine() {
	if w.term != nil && w.drawn > 0 {
		fmt.Fprintln(w.out)
		w.drawn = 0
	}
}

// outcomeLine says how a job ended.
func outcomeLine(id string, st *jobstore.JobStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %s %s", id, st.State)
	if st.StartedAt != nil && st.FinishedAt != nil {
		fmt.Fprintf(&b, " after %s", jobview.FmtAge(st.FinishedAt.Sub(*st.StartedAt)))
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
	return termtext.OneLine(b.String())
}

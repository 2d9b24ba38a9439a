package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

// Exit codes of "jobstore wait" beyond the shared ones (0 succeeded, 1
// failed, 2 usage, 3 runtime): each outcome has its own.
const (
	exitCancelled = 4 // wait: the job ended cancelled
	exitLost      = 5 // wait: the job ended lost
	exitTimeout   = 6 // wait: --timeout passed before the job ended
)

func waitCmd() *command {
	return &command{
		name:    "wait",
		args:    "DIR [--timeout D] [--interval 1s] [--json]",
		summary: "wait for a job to end; the exit code says how it ended",
		doc: `Waits until the job in DIR (ROOT/ID) has ended (Wait), then prints its final
status, and exits with a code that says how it ended, for scripts:

  jobstore wait "$ROOT/$ID" && echo done
  jobstore wait "$ROOT/$ID" --timeout 1h --json

A job that has already ended is printed at once. While it runs, file system
events bring its status as soon as the runner writes it; status.json is also
read every --interval (default 1s), for filesystems that give no events for
another host's writes (NFS, SMB, FUSE). A status that cannot be read for a
moment (corrupt, busy) does not end the wait. --timeout gives up after D.

Prints one line:

  job ID succeeded after 12s (exit code 0): 3 frames
  job ID failed after 9.1s (exit code 3): the command exited with status 3. Remedy: see stderr.log ...

--json prints one object instead, every key always present:

  {"job_id": "...", "dir": "...", "status": {status.json as read}, "message": "<the line above>"}

("status" is null after --timeout with no status.json yet).

A wait that can never end in a status ends at once, with the reason on
stderr naming the file: DIR is not a job or was removed while waiting; DIR
is a symbolic link (never followed, as no command follows one); its
status.json is not a regular file (a FIFO, a socket, a directory), is
larger than any record jobstore writes, or was written by a newer jobstore.

Exit codes: 0 succeeded; 1 failed; 2 bad arguments; 3 the wait can never
end in a status (the reasons above); 4 cancelled; 5 lost; 6 --timeout
passed before the job ended (the line says its state then, or why its
status cannot be read).
Details: docs/cli.md#wait`,
		minPos: 1, maxPos: 1, posNames: "DIR",
		define: defineWait,
	}
}

// waitJSON is the output of "wait --json".
type waitJSON struct {
	ID      string              `json:"job_id"`
	Dir     string              `json:"dir"`
	Status  *jobstore.JobStatus `json:"status"`
	Message string              `json:"message"`
}

// waitOptions are what "jobstore wait" is told: DIR and its flags.
type waitOptions struct {
	Dir      jobstore.JobDir
	Timeout  time.Duration // give up after this long (exitTimeout); 0: never
	Interval time.Duration // the safety poll between watch events
	JSON     bool          // print one JSON object instead of the line
}

func defineWait(fs *pflag.FlagSet) runFunc {
	var opts waitOptions
	fs.DurationVar(&opts.Timeout, "timeout", 0, "give up after this long (exit 6); 0 waits for ever")
	interval := safetyPollFlag(fs)
	fs.BoolVar(&opts.JSON, "json", false, "print one JSON object (shape in the help text)")
	return func(e *env, args, pos []string) error {
		if err := positiveDuration(flagSpelling(args, "interval"), *interval); err != nil {
			return err
		}
		if opts.Timeout < 0 {
			return remedy.Usagef("%s cannot be negative, got %v", flagSpelling(args, "timeout"), opts.Timeout)
		}
		opts.Dir, opts.Interval = jobview.JobDirArg(pos[0]), *interval
		return runWait(e, opts)
	}
}

// runWait waits for opts.Dir's job to end and prints how it ended; the
// exit code its error gives says how (exitUnsuccessful, exitCancelled,
// exitLost), or that opts.Timeout ran out first (exitTimeout).
func runWait(e *env, opts waitOptions) error {
	dir := opts.Dir
	ctx := context.Background()
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	st, err := jobstore.Wait(ctx, dir, jobstore.WithPollInterval(opts.Interval))
	code := exitOK
	var line string
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		var rerr error
		st, rerr = jobstore.ReadStatus(dir) // what it was doing, if that can be read
		state := "it has no status yet"
		switch {
		case rerr != nil:
			state = "its status cannot be read now: " + remedy.ErrorMessage(rerr)
		case st != nil:
			state = fmt.Sprintf("it is %s (seq %d)", st.State, st.Seq)
		}
		line, code = termtext.OneLine(fmt.Sprintf("job %s has not ended after %v: %s", dir.ID(), opts.Timeout, state)), exitTimeout
	case err != nil:
		return remedy.JobDirArgument(err, string(dir))
	default:
		line = outcomeLine(dir.ID(), st)
		switch st.State {
		case jobstore.Failed:
			code = exitUnsuccessful
		case jobstore.Cancelled:
			code = exitCancelled
		case jobstore.Lost:
			code = exitLost
		}
	}
	if opts.JSON {
		if err := jobview.WriteJSON(e.stdout, waitJSON{ID: dir.ID(), Dir: string(dir), Status: st, Message: line}); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(e.stdout, termtext.EscapeTerminal(line))
	}
	if code != exitOK {
		return &exitError{code: code}
	}
	return nil
}

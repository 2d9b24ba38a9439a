package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
)

func logsCmd() *command {
	return &command{
		name:    "logs",
		args:    "DIR [--stderr] [--attempt N | --follow [--interval 250ms]]",
		summary: "print the output 'jobstore work' kept for a job, or follow it",
		doc: `Prints the output that 'jobstore work' kept in the job directory DIR
(ROOT/ID): the command's standard output (stdout.log), or with --stderr its
standard error (stderr.log), as it was written (bytes unchanged, like cat).
Each attempt's part begins with a line of the worker's own:

Examples:
  jobstore logs /srv/jobs/$ID
  jobstore logs /srv/jobs/$ID --stderr --attempt 2
  jobstore logs /srv/jobs/$ID --follow

  [jobstore: attempt 2 began 2026-12-01T10:00:00.000000Z on HOST]

and the command's progress lines are not in stdout.log. --attempt N prints
only attempt N's part, without its line.

--follow then keeps printing what is appended, like tail -f, until the job
has ended (its status is succeeded, failed, cancelled or lost) and its log
has been read to the end, or until stopped (Ctrl-C, SIGINT or SIGTERM). A
log that does not exist yet (a job still queued) is waited for. The log is
looked at every --interval (default 250ms).

A log that is a symbolic link, a FIFO or anything but a regular file is
not read (exit 3), and neither is a job directory that is a link.

Exit codes: 0 printed (with --follow: the job ended); 2 bad arguments; 3
DIR is not a job, or the log is missing (without --follow), holds no part
of attempt N, or cannot be read; --follow stopped by SIGINT or SIGTERM:
ends by that signal (a shell reports 130 or 143).
Details: docs/cli.md#logs`,
		minPos: 1, maxPos: 1, posNames: "DIR",
		define: defineLogs,
	}
}

// defaultLogPoll is how often logs --follow looks at the log.
const defaultLogPoll = 250 * time.Millisecond

// logsOptions are what "jobstore logs" is told: DIR and its flags.
type logsOptions struct {
	Dir      string        // the job directory as given
	Stderr   bool          // stderr.log instead of stdout.log
	Follow   bool          // keep printing what is appended until the job ends
	Interval time.Duration // with Follow: how often the log is looked at
	Attempt  uint64        // only this attempt's part of the log; 0: all of it
}

func defineLogs(flags *pflag.FlagSet) runFunc {
	var opts logsOptions
	flags.BoolVar(&opts.Stderr, "stderr", false, "print stderr.log instead of stdout.log")
	flags.BoolVar(&opts.Follow, "follow", false, "keep printing what is appended until the job ends")
	flags.DurationVar(&opts.Interval, "interval", defaultLogPoll, "with --follow: how often the log is looked at")
	flags.Uint64Var(&opts.Attempt, "attempt", 0, "print only attempt `N`'s part of the log")
	return func(e *env, args, pos []string) error {
		set := map[string]bool{}
		flags.Visit(func(f *pflag.Flag) { set[f.Name] = true })
		if set["interval"] && !opts.Follow {
			return remedy.Usagef("%s applies only with %s", flagSpelling(args, "interval"), flagSpelling(args, "follow"))
		}
		if set["attempt"] && opts.Follow {
			return remedy.Usagef("%s applies only without %s", flagSpelling(args, "attempt"), flagSpelling(args, "follow"))
		}
		if set["attempt"] && opts.Attempt == 0 {
			return remedy.Usagef("%s must be 1 or more: attempts are numbered from 1", flagSpelling(args, "attempt"))
		}
		if err := positiveDuration(flagSpelling(args, "interval"), opts.Interval); err != nil {
			return err
		}
		opts.Dir = pos[0]
		return runLogs(e, opts)
	}
}

// runLogs prints opts.Dir's stdout.log (or stderr.log), or one attempt's
// part of it, or follows it until the job ends or a stop signal arrives.
func runLogs(e *env, opts logsOptions) error {
	// Cleaned as the library reads a JobDir: "ROOT/LINK/" names the entry
	// LINK, which is refused, not the directory a link there leads to.
	dir := jobstore.JobDir(filepath.Clean(opts.Dir))
	if _, err := jobstore.ReadSpec(dir); errors.Is(err, jobstore.ErrNotJob) || errors.Is(err, fs.ErrNotExist) || isIrregularDir(err, dir) {
		return remedy.JobDirArgument(err, opts.Dir) // a damaged job.json still has its logs
	}
	name := jobview.StdoutFile
	if opts.Stderr {
		name = jobview.StderrFile
	}
	if opts.Attempt > 0 {
		return copyAttempt(e.stdout, dir, name, opts.Attempt)
	}
	if !opts.Follow {
		_, found, err := copyLog(e.stdout, dir, name, 0)
		if err != nil {
			return err
		}
		if !found {
			return missingLog(dir, name)
		}
		return nil
	}
	ctx, release := untilStopped(context.Background())
	defer release()
	return followLog(ctx, e.stdout, dir, name, opts.Interval)
}

// isIrregularDir reports whether err refuses the job directory dir itself
// as not a directory (a link, a file), not one of its records.
func isIrregularDir(err error, dir jobstore.JobDir) bool {
	var je *jobstore.Error
	return errors.Is(err, jobstore.ErrNotRegular) && errors.As(err, &je) && je.Path == string(dir)
}

// missingLog is the error for a log that is not there.
func missingLog(dir jobstore.JobDir, name string) error {
	return remedy.WithCLIRemedy(&jobstore.Error{Op: "read log", Path: filepath.Join(string(dir), name),
		Msg: "no such log: the job has not run under 'jobstore work' (yet)", Err: fs.ErrNotExist},
		"run the job with 'jobstore work', or follow it with --follow until it starts")
}

// copyLog copies the log name of dir from offset from to w, and returns
// the offset after what it copied.
func copyLog(w io.Writer, dir jobstore.JobDir, name string, from int64) (next int64, found bool, err error) {
	f, size, err := jobview.OpenLogForRead(dir, name)
	if errors.Is(err, fs.ErrNotExist) {
		return from, false, nil
	}
	if err != nil {
		return from, false, err
	}
	defer f.Close()
	if size < from { // replaced by a shorter log: start again
		from = 0
	}
	n, err := io.Copy(w, io.NewSectionReader(f, from, size-from))
	return from + n, true, err
}

// followLog prints the log as it grows until the job has ended and the
// log is read to its end, or ctx is done.
func followLog(ctx context.Context, w io.Writer, dir jobstore.JobDir, name string, poll time.Duration) error {
	var next int64
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		// The status first: what the log holds once the job has ended is
		// all it will hold.
		st, err := jobstore.ReadStatus(dir)
		ended := err == nil && st != nil && st.State.Terminal()
		next, _, err = copyLog(w, dir, name, next)
		if err != nil {
			return err
		}
		if ended {
			return nil
		}
		select {
		case <-ctx.Done():
			if stop := stopCause(ctx); stop != nil {
				return stop
			}
			return fmt.Errorf("stopped: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// copyAttempt copies attempt n's part of the log name of dir to w: the
// lines after its marker, up to the next marker or the end.
func copyAttempt(w io.Writer, dir jobstore.JobDir, name string, n uint64) error {
	f, size, err := jobview.OpenLogForRead(dir, name)
	if errors.Is(err, fs.ErrNotExist) {
		return missingLog(dir, name)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, size))
	if err != nil {
		return err
	}
	found := false
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte{'\n'})
		end := len(data) - len(rest) // line and its newline
		if a, ok := markedAttempt(line); ok {
			if found {
				return nil
			}
			found = a == n
		} else if found {
			if _, err := w.Write(data[:end]); err != nil {
				return err
			}
		}
		data = rest
	}
	if !found {
		return remedy.WithCLIRemedy(&jobstore.Error{Op: "read log", Path: filepath.Join(string(dir), name), Err: fs.ErrNotExist,
			Msg: fmt.Sprintf("the log holds no part of attempt %d", n)},
			"run 'jobstore show DIR' for the job's attempts; a log cut by --log-limit keeps only its last part")
	}
	return nil
}

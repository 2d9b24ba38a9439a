package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/supervise"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

// Environment the worker gives a job's command.
const (
	jobDirEnv = "JOBSTORE_JOB_DIR" // the job directory, an absolute path
	jobIDEnv  = "JOBSTORE_JOB_ID"
)

// runJob runs the worker's command for run and finishes it: succeeded on
// exit 0, failed otherwise (queued again by the job's retry policy),
// cancelled when stopped on a cancel request, failed "timed out" when
// stopped at the job's timeout. When the worker's forced stop ends ctx
// (jobstore.ErrWorkerStopped), it stops the command and writes nothing:
// the Worker queues the job again. It calls started once the command has
// started (not when it could not be).
func (wk *worker) runJob(ctx context.Context, run *jobstore.Run, started func()) jobEnd {
	dir := string(run.Dir())
	stdout, err := openLog(run.OpenFile, jobview.StdoutFile, wk.logLimit)
	if err != nil {
		return wk.fail(run, fmt.Sprintf("cannot keep the command's output in %s: %v", jobview.StdoutFile, err),
			"remove or rename what is in the way in the job directory, then submit the job again", false)
	}
	defer stdout.Close()
	stderr, err := openLog(run.OpenFile, jobview.StderrFile, wk.logLimit)
	if err != nil {
		return wk.fail(run, fmt.Sprintf("cannot keep the command's output in %s: %v", jobview.StderrFile, err),
			"remove or rename what is in the way in the job directory, then submit the job again", false)
	}
	defer stderr.Close()
	st := run.Status()
	at := st.UpdatedAt
	if st.StartedAt != nil {
		at = *st.StartedAt
	}
	marker := attemptLine(st.Attempt, at, st.Host)
	stdout.mark(marker)
	stderr.mark(marker)

	cmd := exec.Command(wk.argv[0], wk.argv[1:]...)
	cmd.Env = append(os.Environ(), jobDirEnv+"="+dir, jobIDEnv+"="+run.Dir().ID())
	params := run.Spec().Params
	if len(params) == 0 {
		params = []byte("null")
	}
	cmd.Stdin = bytes.NewReader(append(bytes.Clone(params), '\n'))
	out := &progressWriter{out: stdout, report: func(f float64, msg string) {
		_ = run.Progress(f, msg) // a failed write is retried by the next; ownership lost ends the run's context
	}, unparsed: func(line string) {
		note := notProgressNote(line)
		_, _ = io.WriteString(stderr, "[jobstore: "+note+"]\n")
		wk.warnf("job %s: %s", run.Dir().ID(), note)
	}}
	cmd.Stdout = out
	cmd.Stderr = stderr
	proc := supervise.New(cmd, supervise.Options{Grace: wk.grace, Lease: run, Warn: func(format string, args ...any) {
		wk.warnf("job %s: "+format, append([]any{run.Dir().ID()}, args...)...)
	}, NoCgroup: wk.noCgroup})
	if err := proc.Start(); err != nil {
		end := wk.fail(run, fmt.Sprintf("cannot run %s: %v", wk.argv[0], err),
			"check the command given to 'jobstore work' on this host, then submit the job again", true)
		end.startErr = err
		return end
	}
	began := time.Now()
	started()
	defer proc.Release()
	exited := make(chan supervise.End, 1)
	go func() { exited <- proc.Wait() }()

	var (
		stopped  string // why the command was asked to stop: "" if it was not
		cause    error  // the run's context's cause when that stopped it
		killTime <-chan time.Time
		killed   bool // the grace passed: killed
		pe       supervise.End
	)
	asked := ctx.Done() // nil once asked: the request is acted on once
wait:
	for {
		select {
		case pe = <-exited:
			break wait
		case <-asked:
			asked = nil
			if errors.Is(context.Cause(ctx), jobstore.ErrWorkerStopped) && run.Context().Err() == nil {
				stopped = "the worker was stopped (interrupted twice)"
			} else {
				cause = context.Cause(run.Context())
				stopped = termtext.OneLine(causeText(cause))
			}
			if err := proc.Terminate(); err != nil {
				wk.warnf("job %s: %s to the command: %v", run.Dir().ID(), supervise.StopName, err)
			}
			killTime = time.After(wk.grace)
		case <-killTime:
			if err := proc.Kill(); err != nil {
				wk.warnf("job %s: kill: %v", run.Dir().ID(), err)
			}
			killed = true
			killTime = nil
		}
	}
	ran := time.Since(began)
	if stopped == "" && wk.stop.stoppedWith(pe) {
		stopped = wk.stop.stoppedCommand(ctx, pe)
	}
	_ = out.Close()
	if killed {
		stopped += fmt.Sprintf("; %s sent to the command, then %s after the grace of %v", supervise.StopName, supervise.KillName, wk.grace)
	} else if stopped != "" {
		stopped += fmt.Sprintf("; %s sent to the command", supervise.StopName)
	}
	end := wk.finish(run, pe, stopped, cause, errors.Join(stdout.Err(), stderr.Err()))
	end.ran = ran
	return end
}

// finish records how the command ended, once it and every process it
// started are gone (pe).
func (wk *worker) finish(run *jobstore.Run, pe supervise.End, stopped string, cause error, outErr error) jobEnd {
	var end jobEnd
	how := pe.How
	if pe.Exited {
		code := pe.Code
		end.exitCode, end.signal = &code, pe.Signal
	}
	// The command's last progress message stays, unless the outcome has its
	// own: Finish replaces the message, so it is read back (once written).
	_ = run.Flush()
	o := jobstore.Outcome{ExitCode: end.exitCode, Message: run.Status().Message}
	switch {
	case errors.Is(cause, jobstore.ErrNotOwner):
		// Taken over by another host: nothing of ours may be written.
		end.message = "the worker no longer owns the job (" + termtext.OneLine(causeText(cause)) + "); the command " + how
		if pe.Watchdog != "" {
			end.message += "; " + pe.Watchdog
		}
		end.err = cause
		return end
	case stopped != "" && cause == nil:
		// The worker's forced stop: the Worker queues the job again.
		end.interrupted = true
		end.message = fmt.Sprintf("%s, which %s", stopped, how)
		return end
	case pe.Watchdog != "":
		o.State = jobstore.Failed
		o.Error = pe.Watchdog + "; the command " + how
		o.Remedy = "find why the worker stopped renewing its lease (it was stopped, starved, or blocked on the file system), then submit the job again"
	case errors.Is(cause, context.DeadlineExceeded):
		o.State = jobstore.Failed
		o.Error = fmt.Sprintf("%s, which %s", stopped, how)
		o.Remedy = "raise the job's timeout (submit --timeout), or make its command faster"
	case stopped != "":
		o.State = jobstore.Cancelled
		o.Message = fmt.Sprintf("%s, which %s", stopped, how)
	case end.exitCode != nil && *end.exitCode == 0 && end.signal == "":
		o.State = jobstore.Succeeded
	default:
		o.State = jobstore.Failed
		o.Error = "the command " + how
		o.Remedy = "see " + jobview.StderrFile + " and " + jobview.StdoutFile + " in the job directory"
	}
	if pe.Leftover != "" {
		o.Message = joinNote(o.Message, pe.Leftover)
	}
	if outErr != nil {
		note := "part of the command's output was not kept: " + outErr.Error()
		if o.Message != "" {
			note = o.Message + "; " + note
		}
		o.Message = note
	}
	end.state, end.outcome, end.message = o.State, o.State, o.Error
	if end.message == "" {
		end.message = o.Message
	}
	end.finished(run, run.Finish(o))
	return end
}

// fail finishes run failed without having run the command (or because it
// could not be started); fatal says the worker cannot run any job.
func (wk *worker) fail(run *jobstore.Run, why, remedy string, fatal bool) jobEnd {
	end := jobEnd{state: jobstore.Failed, outcome: jobstore.Failed, message: why, fatal: fatal}
	end.finished(run, run.Finish(jobstore.Outcome{State: jobstore.Failed, Error: why, Remedy: remedy}))
	return end
}

// causeText is what a run's context's cause says, without the library's
// remedy (which speaks to Go programmers).
func causeText(err error) string {
	var je *jobstore.Error
	if errors.As(err, &je) && je.Msg != "" {
		return je.Msg
	}
	if err == nil {
		return "stopped"
	}
	return err.Error()
}

// joinNote adds note to a message, after what it says already.
func joinNote(msg, note string) string {
	if msg == "" {
		return note
	}
	return msg + "; " + note
}

//go:build unix

package main

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// gone reports whether no process has pid (a zombie counts as alive until
// reaped; an orphan's is reaped by init).
func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// A cancel request stops the command and everything in its process group:
// with SIGTERM, or with SIGKILL after the grace when SIGTERM is ignored.
func TestWork_CancelStopsTheCommandAndItsGroup(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ignore   bool
		grace    string
		exitCode int
		how      string
	}{
		// A grace far longer than the test may run: SIGTERM alone ends it.
		{"SIGTERM honoured", false, "1h", 128 + int(syscall.SIGTERM), "SIGTERM sent to the command, which was killed by signal SIGTERM"},
		{"SIGTERM ignored: SIGKILL after the grace", true, "200ms", 128 + int(syscall.SIGKILL), "then SIGKILL after the grace of 200ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := testdir.New(t)
			dir := submitKind(t, root, "j", "k", "")
			env := []string{grandchildEnv + "=1"}
			if tc.ignore {
				env = append(env, ignoreTermEnv+"=1")
			}
			w := startWorker(t, "hold", env, root, "--grace", tc.grace)
			gc := filepath.Join(string(dir), grandchildFile)
			clitest.WaitUntil(t, "the command and its child to run", func() bool {
				return jobview.Exists(filepath.Join(string(dir), pidFile)) && jobview.Exists(gc)
			})
			pid, gcPID := readPID(t, filepath.Join(string(dir), pidFile)), readPID(t, gc)
			t.Cleanup(func() { _ = syscall.Kill(gcPID, syscall.SIGKILL) }) // should the test fail
			require.NoError(t, jobstore.RequestCancel(dir, jobstore.CancelRequest{RequestedBy: "tester", Reason: "wrong input"}))

			st := waitEnded(t, dir)
			require.Equal(t, jobstore.Cancelled, st.State)
			require.Equal(t, tc.exitCode, *st.ExitCode)
			require.Contains(t, st.Message, `cancel requested by "tester"`)
			require.Contains(t, st.Message, tc.how)
			clitest.WaitUntil(t, "the command's process group to be gone", func() bool { return gone(pid) && gone(gcPID) })

			require.NoError(t, w.cmd.Process.Signal(os.Interrupt))
			w.wait(t)
			requireEndedBy(t, w.cmd, syscall.SIGINT)
		})
	}
}

// An interrupt says what the worker waits for: never "0 running jobs".
func TestWork_InterruptSaysWhatItWaitsFor(t *testing.T) {
	for _, tc := range []struct {
		name    string
		running int
		says    string
	}{
		{"none running", 0, "SIGINT: taking no more jobs; no job is running: the worker ends"},
		{"one running", 1, "SIGINT: taking no more jobs; waiting for the running job to end (interrupt again to stop it: it is queued again)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := testdir.New(t)
			done := submitKind(t, root, "done", "k", "")
			w := startWorker(t, "hold", nil, root)
			writeFileT(t, filepath.Join(string(done), releaseFile), "")
			clitest.WaitUntil(t, "the first job's end line", func() bool { return regexp.MustCompile(`end +done succeeded`).MatchString(w.stdout.String()) })
			if tc.running == 1 {
				held := submitKind(t, root, "held", "k", "")
				clitest.WaitUntil(t, "the second job to run", func() bool { return jobview.Exists(filepath.Join(string(held), pidFile)) })
				t.Cleanup(func() { writeFileT(t, filepath.Join(string(held), releaseFile), "") })
				require.NoError(t, w.cmd.Process.Signal(os.Interrupt))
				clitest.WaitUntil(t, "the worker to say it stops taking jobs", func() bool {
					return strings.Contains(w.stderr.String(), "taking no more jobs")
				})
				writeFileT(t, filepath.Join(string(held), releaseFile), "")
			} else {
				require.NoError(t, w.cmd.Process.Signal(os.Interrupt))
			}
			r := w.wait(t)
			requireEndedBy(t, w.cmd, syscall.SIGINT)
			require.Contains(t, r.stderr, tc.says)
			require.NotContains(t, r.stderr, "0 running")
		})
	}
}

// The first interrupt: no more jobs are taken, the running ones run to
// their end. The second: they are stopped and queued again, their attempt
// kept as interrupted (it counts against no --max-attempts).
func TestWork_FirstInterruptDrainsSecondRequeues(t *testing.T) {
	for _, twice := range []bool{false, true} {
		name := "one interrupt drains"
		if twice {
			name = "two interrupts requeue"
		}
		t.Run(name, func(t *testing.T) {
			root := testdir.New(t)
			a := submitKind(t, root, "a", "k", "")
			b := submitKind(t, root, "b", "k", "")
			c := submitKind(t, root, "c", "k", "")
			w := startWorker(t, "hold", nil, root, "--parallel", "2")
			clitest.WaitUntil(t, "two commands to run", func() bool {
				return jobview.Exists(filepath.Join(string(a), pidFile)) && jobview.Exists(filepath.Join(string(b), pidFile))
			})
			require.NoError(t, w.cmd.Process.Signal(os.Interrupt))
			clitest.WaitUntil(t, "the worker to say it stops taking jobs", func() bool {
				return strings.Contains(w.stderr.String(), "taking no more jobs")
			})
			want := jobstore.Succeeded
			if twice {
				require.NoError(t, w.cmd.Process.Signal(syscall.SIGTERM))
				want = jobstore.Queued
			} else {
				for _, d := range []jobstore.JobDir{a, b} {
					writeFileT(t, filepath.Join(string(d), releaseFile), "")
				}
			}
			r := w.wait(t)
			requireEndedBy(t, w.cmd, syscall.SIGINT) // by the first signal, as watch ends
			require.Contains(t, r.stderr, "SIGINT: taking no more jobs")
			if twice {
				require.Contains(t, r.stderr, "SIGTERM: stopping the running jobs; they are queued again")
				require.Contains(t, r.stdout, "queued exit 143")
			}
			for _, d := range []jobstore.JobDir{a, b} {
				st := status(t, d)
				require.Equal(t, want, st.State, "%s\n%s", r.stdout, r.stderr)
				if twice {
					require.Len(t, st.Attempts, 1, "%s", r.stdout)
					require.True(t, st.Attempts[0].Interrupted)
					require.Contains(t, st.Attempts[0].Error, "the worker was stopped (interrupted twice)")
					require.Nil(t, st.RetryAt, "due again at once")
				}
			}
			require.Equal(t, jobstore.Queued, status(t, c).State, "a job was taken after the interrupt:\n%s", r.stdout)
			if !twice {
				return
			}
			// The next worker runs the interrupted jobs again, to their end.
			for _, d := range []jobstore.JobDir{a, b, c} {
				writeFileT(t, filepath.Join(string(d), releaseFile), "")
			}
			requireCode(t, runWorker(t, "hold", nil, root, "--until-empty"), exitOK)
			for _, d := range []jobstore.JobDir{a, b} {
				st := status(t, d)
				require.Equal(t, jobstore.Succeeded, st.State)
				require.Len(t, st.Attempts, 2, "the interrupted attempt, then the one that ended")
			}
		})
	}
}

// A worker killed mid-job takes its command with it (Linux), its job is
// marked lost by a reconciler, and no worker runs it again.
func TestWork_KilledWorkerJobIsLostNeverRunAgain(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the command dies with the worker on Linux only (its supervisor)")
	}
	root := testdir.New(t)
	dir := submitKind(t, root, "j", "k", "")
	w := startWorker(t, "hold", nil, root)
	clitest.WaitUntil(t, "the command to run", func() bool { return jobview.Exists(filepath.Join(string(dir), pidFile)) })
	pid := readPID(t, filepath.Join(string(dir), pidFile))
	require.NoError(t, w.cmd.Process.Kill())
	<-w.done
	clitest.WaitUntil(t, "the orphaned command to be killed", func() bool { return gone(pid) })
	require.NoError(t, os.Remove(filepath.Join(string(dir), pidFile)))

	// Before a reconciler looks, the job still says running: a new worker
	// leaves it alone.
	r := runWorker(t, "hold", nil, root, "--until-empty")
	requireCode(t, r, exitOK)
	require.Empty(t, r.stdout)
	require.Equal(t, jobstore.Running, status(t, dir).State)

	rc := runCLI(t, "reconcile", root)
	requireCode(t, rc, exitOK)
	require.Equal(t, jobstore.Lost, status(t, dir).State)
	r = runWorker(t, "hold", nil, root, "--until-empty")
	requireCode(t, r, exitOK)
	require.Empty(t, r.stdout)
	require.NoFileExists(t, filepath.Join(string(dir), pidFile), "the lost job ran again")
}

// A command that is found but cannot be run (its interpreter is missing)
// fails the job it was started for, and the worker takes no more jobs:
// it would fail them all.
func TestWork_CommandThatCannotRunStopsTheWorker(t *testing.T) {
	root := testdir.New(t)
	a := submitKind(t, root, "a", "k", "")
	b := submitKind(t, root, "b", "k", "")
	script := filepath.Join(testdir.New(t), "job.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/no/such/interpreter\n"), 0o755))
	r := runCLI(t, "work", root, "--", script)
	requireCode(t, r, exitBroken)
	st := status(t, a)
	require.Equal(t, jobstore.Failed, st.State)
	require.Contains(t, st.Error, "cannot run "+script)
	require.Equal(t, jobstore.Queued, status(t, b).State)
	require.Contains(t, r.stderr, "stopped taking jobs")
}

// A worker killed mid-job: a live worker on the same root rescues its job
// without a reconcile command, and runs it again while it has attempts
// left; the attempt whose worker died is kept as lost.
func TestWork_KilledWorkersJobIsRescuedByAnotherWorker(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the command dies with the worker on Linux only (its supervisor)")
	}
	root := testdir.New(t)
	dir := submitCLI(t, root, "--max-attempts", "2", "--backoff", "100ms")
	w := startWorker(t, "hold", nil, root)
	clitest.WaitUntil(t, "the command to run", func() bool { return jobview.Exists(filepath.Join(string(dir), pidFile)) })
	pid := readPID(t, filepath.Join(string(dir), pidFile))
	require.NoError(t, w.cmd.Process.Kill())
	<-w.done
	clitest.WaitUntil(t, "the orphaned command to be killed", func() bool { return gone(pid) })
	writeFileT(t, filepath.Join(string(dir), releaseFile), "") // its next run ends at once

	rescuer := startWorker(t, "hold", nil, root, "--scan", "100ms")
	st := waitEnded(t, dir)
	require.Equal(t, jobstore.Succeeded, st.State, "%s\n%s", rescuer.stdout.String(), rescuer.stderr.String())
	require.Len(t, st.Attempts, 2)
	require.Equal(t, jobstore.Lost, st.Attempts[0].State, "the attempt whose worker died")
	require.Equal(t, jobstore.Succeeded, st.Attempts[1].State)
	require.NoError(t, rescuer.cmd.Process.Signal(os.Interrupt))
	rescuer.wait(t)
	requireEndedBy(t, rescuer.cmd, syscall.SIGINT)
}

package jobstore_test

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// racer waits for a byte on stdin, starts the job in JOBSTORE_TEST_DIR,
// says "won" or "locked <error>", then holds what it won until stdin closes.
func racer() int {
	var b [1]byte
	_, _ = os.Stdin.Read(b[:]) // the parent's one-byte "go"
	r, err := jobstore.Start(jobstore.JobDir(os.Getenv(dirEnv)))
	switch {
	case errors.Is(err, jobstore.ErrLocked):
		fmt.Println("locked", err)
	case err != nil:
		fmt.Println("error", err)
		return 1
	default:
		fmt.Println("won")
	}
	_, _ = io.Copy(io.Discard, os.Stdin) // hold the lock until the parent has both answers and closes stdin
	if r != nil {
		return exitCode(r.Close())
	}
	return 0
}

func exitCode(err error) int {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startJob submits a job under a fresh root and starts it with every
// Progress call written before it returns (WithProgressInterval(0)), so
// that a test can read what it just reported; the coalescing tests use
// startCoalesced.
func startJob(t *testing.T) (jobstore.JobDir, *jobstore.Run) {
	t.Helper()
	dir, err := jobstore.Submit(filepath.Join(tempDir(t), "jobs"), jobstore.JobSpec{Kind: "test"})
	require.NoError(t, err)
	r, err := jobstore.Start(dir, jobstore.WithProgressInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	return dir, r
}

func TestSubmit_CreatesRootAndQueuedJobWithGeneratedID(t *testing.T) {
	root := filepath.Join(tempDir(t), "new", "jobs")
	dir, err := jobstore.Submit(root, jobstore.JobSpec{Kind: "render", Params: []byte(`{"n":1}`)})
	require.NoError(t, err)
	assert.Equal(t, root, filepath.Dir(string(dir)))
	require.NoError(t, jobstore.ValidateJobID(dir.ID()))

	spec, err := jobstore.ReadSpec(dir)
	require.NoError(t, err)
	assert.Equal(t, dir.ID(), spec.ID)
	assert.Equal(t, "render", spec.Kind)
	assert.False(t, spec.SubmittedAt.IsZero())

	st := readStatus(t, dir)
	assert.Equal(t, jobstore.Queued, st.State)
	assert.Equal(t, uint64(1), st.Seq)
	assert.Equal(t, dir.ID(), st.JobID)
}

func TestSubmit_TakenIDIsErrExistsAndChangesNothing(t *testing.T) {
	root := tempDir(t)
	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "job-1", Kind: "first"})
	require.NoError(t, err)
	r, err := jobstore.Start(dir)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	before, err := os.ReadFile(dir.StatusPath())
	require.NoError(t, err)

	_, err = jobstore.Submit(root, jobstore.JobSpec{ID: "job-1", Kind: "second"})
	require.ErrorIs(t, err, jobstore.ErrExists)
	spec, err := jobstore.ReadSpec(dir)
	require.NoError(t, err)
	assert.Equal(t, "first", spec.Kind)
	after, err := os.ReadFile(dir.StatusPath())
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the running job's status is not reset to queued")
}

func TestSubmit_InvalidSpecIsErrInvalid(t *testing.T) {
	root := tempDir(t)
	for name, spec := range map[string]jobstore.JobSpec{
		"bad id":     {ID: "../escape", Kind: "x"},
		"empty kind": {ID: "ok"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := jobstore.Submit(root, spec)
			require.ErrorIs(t, err, jobstore.ErrInvalid)
		})
	}
	des, err := os.ReadDir(root)
	require.NoError(t, err)
	assert.Empty(t, des, "nothing is created for an invalid spec")
}

func TestStart_WritesRunningWithOwnerAndNextSeq(t *testing.T) {
	dir, r := startJob(t)
	st := readStatus(t, dir)
	host, _ := os.Hostname()
	assert.Equal(t, jobstore.Running, st.State)
	assert.Equal(t, uint64(2), st.Seq, "queued was seq 1")
	assert.Equal(t, os.Getpid(), st.PID)
	assert.Equal(t, host, st.Host)
	require.NotNil(t, st.StartedAt)
	assert.Equal(t, st.UpdatedAt, *st.StartedAt)
	assert.Equal(t, st, r.Status(), "the handle's status is what was written")
	assert.Equal(t, dir, r.Dir())
	assert.Equal(t, "test", r.Spec().Kind)
}

func TestRun_EveryUpdateAdvancesSeqAndUpdatedAt(t *testing.T) {
	dir, r := startJob(t)
	prev := readStatus(t, dir)
	updates := []struct {
		name   string
		update func() error
		check  func(jobstore.JobStatus)
	}{
		{"progress", func() error { return r.Progress(0.25, "a quarter") }, func(st jobstore.JobStatus) {
			require.NotNil(t, st.Progress)
			assert.Equal(t, 0.25, *st.Progress)
			assert.Equal(t, "a quarter", st.Message)
		}},
		{"progress keeps message", func() error { return r.Progress(0.5, "") }, func(st jobstore.JobStatus) {
			assert.Equal(t, 0.5, *st.Progress)
			assert.Equal(t, "a quarter", st.Message)
		}},
		{"message", func() error { return r.SetMessage("almost") }, func(st jobstore.JobStatus) {
			assert.Equal(t, "almost", st.Message)
			assert.Equal(t, 0.5, *st.Progress, "progress stays")
		}},
		{"finish", func() error {
			code := 3
			return r.Finish(jobstore.Outcome{State: jobstore.Failed, Message: "gave up", ExitCode: &code, Error: "disk full", Remedy: "free space"})
		}, func(st jobstore.JobStatus) {
			assert.Equal(t, jobstore.Failed, st.State)
			assert.Equal(t, "gave up", st.Message)
			require.NotNil(t, st.ExitCode)
			assert.Equal(t, 3, *st.ExitCode)
			assert.Equal(t, "disk full", st.Error)
			assert.Equal(t, "free space", st.Remedy)
			require.NotNil(t, st.FinishedAt)
			assert.Equal(t, st.UpdatedAt, *st.FinishedAt)
			assert.Equal(t, prev.StartedAt, st.StartedAt, "started_at stays")
			assert.Equal(t, os.Getpid(), st.PID)
		}},
	}
	for _, u := range updates {
		t.Run(u.name, func(t *testing.T) {
			require.NoError(t, u.update())
			st := readStatus(t, dir)
			assert.Equal(t, prev.Seq+1, st.Seq)
			assert.False(t, st.UpdatedAt.Before(prev.UpdatedAt))
			assert.Equal(t, st, r.Status())
			u.check(st)
			prev = st
		})
	}
}

func TestRun_StatusIsACopy(t *testing.T) {
	dir, r := startJob(t)
	require.NoError(t, r.Progress(0.5, "half"))
	st := r.Status()
	*st.Progress = 0.9
	*st.StartedAt = time.Time{}
	assert.Equal(t, readStatus(t, dir), r.Status(), "changing the copy changes nothing")
}

func TestRun_UpdateAfterFinishIsErrWrongState(t *testing.T) {
	dir, r := startJob(t)
	require.NoError(t, r.Finish(jobstore.Outcome{State: jobstore.Succeeded, Message: "done"}))
	final, err := os.ReadFile(dir.StatusPath())
	require.NoError(t, err)
	for name, update := range map[string]func() error{
		"progress": func() error { return r.Progress(1, "more") },
		"message":  func() error { return r.SetMessage("more") },
		"finish":   func() error { return r.Finish(jobstore.Outcome{State: jobstore.Failed}) },
	} {
		t.Run(name, func(t *testing.T) {
			err := update()
			require.ErrorIs(t, err, jobstore.ErrWrongState)
			assert.Contains(t, err.Error(), "the job is finished")
			now, rerr := os.ReadFile(dir.StatusPath())
			require.NoError(t, rerr)
			assert.Equal(t, string(final), string(now))
		})
	}
}

func TestRun_UpdateAfterCloseIsErrInvalid(t *testing.T) {
	dir, r := startJob(t)
	require.NoError(t, r.Close())
	require.NoError(t, r.Close(), "Close twice is not an error")
	require.ErrorIs(t, r.Progress(0.5, ""), jobstore.ErrInvalid)
	require.ErrorIs(t, r.Finish(jobstore.Outcome{State: jobstore.Succeeded}), jobstore.ErrInvalid)
	assert.Equal(t, jobstore.Running, readStatus(t, dir).State, "Close does not finish the job")
	lk, err := jobstore.LockJob(dir)
	require.NoError(t, err, "Close released the lock")
	require.NoError(t, lk.Unlock())
}

func TestRun_InvalidInputWritesNothing(t *testing.T) {
	dir, r := startJob(t)
	before, err := os.ReadFile(dir.StatusPath())
	require.NoError(t, err)
	tests := map[string]func() error{
		"progress below 0": func() error { return r.Progress(-0.1, "") },
		"progress above 1": func() error { return r.Progress(1.5, "") },
		"progress NaN":     func() error { return r.Progress(math.NaN(), "") },
		"finish running":   func() error { return r.Finish(jobstore.Outcome{State: jobstore.Running}) },
		"finish lost":      func() error { return r.Finish(jobstore.Outcome{State: jobstore.Lost}) },
		"finish no state":  func() error { return r.Finish(jobstore.Outcome{}) },
	}
	for name, update := range tests {
		t.Run(name, func(t *testing.T) {
			require.ErrorIs(t, update(), jobstore.ErrInvalid)
			after, err := os.ReadFile(dir.StatusPath())
			require.NoError(t, err)
			assert.Equal(t, string(before), string(after))
		})
	}
	require.NoError(t, r.Finish(jobstore.Outcome{State: jobstore.Succeeded}), "the run is still usable")
}

func TestRun_FailedWriteDoesNotAdvanceSeq(t *testing.T) {
	dir, r := startJob(t)
	seq := r.Status().Seq
	// A non-empty directory in status.json's place makes the replace fail.
	require.NoError(t, os.Remove(dir.StatusPath()))
	require.NoError(t, os.MkdirAll(filepath.Join(dir.StatusPath(), "x"), 0o755))
	require.Error(t, r.Progress(0.5, "lost write"))
	require.Error(t, r.Finish(jobstore.Outcome{State: jobstore.Succeeded}))
	assert.Equal(t, seq, r.Status().Seq)
	assert.Equal(t, jobstore.Running, r.Status().State, "a failed Finish does not finish the handle")

	require.NoError(t, os.Remove(filepath.Join(dir.StatusPath(), "x"))) // not RemoveAll: it fails under Wine
	require.NoError(t, os.Remove(dir.StatusPath()))
	require.NoError(t, r.Finish(jobstore.Outcome{State: jobstore.Succeeded}), "Finish may be retried")
	st := readStatus(t, dir)
	assert.Equal(t, seq+1, st.Seq, "the failed writes' numbers are reused")
	assert.Nil(t, st.Progress, "the failed progress is not in the handle's status")
}

func TestStart_ContinuesSeqFromThePreviousRun(t *testing.T) {
	tests := []struct {
		name    string
		status  *jobstore.JobStatus
		wantSeq uint64
	}{
		{"no status yet", nil, 1},
		{"queued", statusIn(jobstore.Queued, 7), 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeJob(t, tempDir(t), specAt("j1", 0), tc.status)
			r, err := jobstore.Start(dir)
			require.NoError(t, err)
			require.NoError(t, r.Progress(0.1, ""))
			require.NoError(t, r.Close())
			assert.Equal(t, tc.wantSeq+1, readStatus(t, dir).Seq)

			// A Start of a job that still says running takes over its gone
			// runner: that attempt, the job's only one, ends lost, next in seq.
			_, err = jobstore.Start(dir)
			require.ErrorIs(t, err, jobstore.ErrWrongState)
			st := readStatus(t, dir)
			assert.Equal(t, jobstore.Lost, st.State)
			assert.Equal(t, tc.wantSeq+2, st.Seq)
		})
	}
	t.Run("running, runner gone", func(t *testing.T) {
		dir := writeJob(t, tempDir(t), specAt("j1", 0), statusIn(jobstore.Running, 41))
		_, err := jobstore.Start(dir)
		require.ErrorIs(t, err, jobstore.ErrWrongState)
		st := readStatus(t, dir)
		assert.Equal(t, jobstore.Lost, st.State)
		assert.EqualValues(t, 42, st.Seq)
	})
}

func TestStart_TerminalJobIsErrWrongStateAndUnlocked(t *testing.T) {
	for _, state := range []jobstore.State{jobstore.Succeeded, jobstore.Failed, jobstore.Cancelled, jobstore.Lost} {
		t.Run(string(state), func(t *testing.T) {
			dir := writeJob(t, tempDir(t), specAt("j1", 0), statusIn(state, 5))
			_, err := jobstore.Start(dir)
			require.ErrorIs(t, err, jobstore.ErrWrongState)
			var e *jobstore.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "submit a new job", e.Remedy)
			assert.Equal(t, uint64(5), readStatus(t, dir).Seq, "nothing written")
			lk, err := jobstore.LockJob(dir)
			require.NoError(t, err, "a failed Start releases the lock")
			require.NoError(t, lk.Unlock())
		})
	}
}

func TestStart_UnreadableRecordsFailAndUnlock(t *testing.T) {
	tests := map[string]func(jobstore.JobDir){
		"corrupt status": func(d jobstore.JobDir) { require.NoError(t, os.WriteFile(d.StatusPath(), []byte("{"), 0o644)) },
		"corrupt spec": func(d jobstore.JobDir) {
			require.NoError(t, os.Chmod(d.SpecPath(), 0o644))
			require.NoError(t, os.WriteFile(d.SpecPath(), []byte("{\"job_id\""), 0o644))
		},
	}
	for name, damage := range tests {
		t.Run(name, func(t *testing.T) {
			dir := writeJob(t, tempDir(t), specAt("j1", 0), statusIn(jobstore.Queued, 1))
			damage(dir)
			_, err := jobstore.Start(dir)
			require.ErrorIs(t, err, jobstore.ErrCorrupt)
			lk, err := jobstore.LockJob(dir)
			require.NoError(t, err, "a failed Start releases the lock")
			require.NoError(t, lk.Unlock())
		})
	}
}

// raceRounds: each round races two fresh processes on a fresh job.
const raceRounds = 3

func TestStart_TwoProcessesRaceExactlyOneWins(t *testing.T) {
	for round := range raceRounds {
		t.Run(strconv.Itoa(round), func(t *testing.T) {
			dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{Kind: "test"})
			require.NoError(t, err)
			racers := []*child{
				startRole(t, "racer", dirEnv+"="+string(dir)),
				startRole(t, "racer", dirEnv+"="+string(dir)),
			}
			for _, c := range racers {
				_, err := c.stdin.Write([]byte("g"))
				require.NoError(t, err)
			}
			var winners []int
			var lockedErr string
			for _, c := range racers {
				switch said := c.line(t); {
				case said == "won":
					winners = append(winners, c.cmd.Process.Pid)
				case strings.HasPrefix(said, "locked "):
					lockedErr = said
				default:
					t.Fatalf("racer said %q", said)
				}
			}
			require.Len(t, winners, 1, "exactly one Start wins")
			require.NotEmpty(t, lockedErr, "the other gets ErrLocked")
			// The loser may have looked before the winner wrote running; if
			// status.json named a holder, it is the winner.
			if strings.Contains(lockedErr, "held by pid") {
				assert.Contains(t, lockedErr, "held by pid "+strconv.Itoa(winners[0]))
			}
			st := readStatus(t, dir)
			assert.Equal(t, winners[0], st.PID)
			assert.Equal(t, uint64(2), st.Seq, "one running write only")
			for _, c := range racers {
				require.NoError(t, c.stdin.Close())
				require.NoError(t, c.cmd.Wait())
			}
		})
	}
}

// TestStart_EveryLoserOfARaceNamesTheWinner: job.lock names its holder
// from the moment it is taken, so every loser of a Start race names the
// winner's pid, even one that looked before the winner wrote running.
func TestStart_EveryLoserOfARaceNamesTheWinner(t *testing.T) {
	const racers = 8
	for round := range raceRounds {
		t.Run(strconv.Itoa(round), func(t *testing.T) {
			dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{Kind: "test"})
			require.NoError(t, err)
			var cs []*child
			for range racers {
				cs = append(cs, startRole(t, "racer", dirEnv+"="+string(dir)))
			}
			for _, c := range cs {
				_, err := c.stdin.Write([]byte("g"))
				require.NoError(t, err)
			}
			var winners []int
			var losses []string
			for _, c := range cs {
				switch said := c.line(t); {
				case said == "won":
					winners = append(winners, c.cmd.Process.Pid)
				case strings.HasPrefix(said, "locked "):
					losses = append(losses, said)
				default:
					t.Fatalf("racer said %q", said)
				}
			}
			require.Len(t, winners, 1, "exactly one Start wins")
			require.Len(t, losses, racers-1)
			for _, l := range losses {
				assert.Contains(t, l, "held by pid "+strconv.Itoa(winners[0])+" on host")
				assert.Contains(t, l, "as job.lock records it", "named from the first instant, not from status.json")
			}
			for _, c := range cs {
				require.NoError(t, c.stdin.Close())
				require.NoError(t, c.cmd.Wait())
			}
		})
	}
}

func TestRun_ConcurrentUpdatesEachGetTheirOwnSeq(t *testing.T) {
	const goroutines, updates = 4, 25
	dir, r := startJob(t)
	start := r.Status().Seq
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range updates {
				assert.NoError(t, r.Progress(float64(i)/updates, "g"+strconv.Itoa(g)))
			}
		})
	}
	wg.Wait()
	want := start + goroutines*updates
	assert.Equal(t, want, r.Status().Seq, "no update lost or numbered twice")
	assert.Equal(t, want, readStatus(t, dir).Seq)
}

// TestSeq_NeverWraps: at seq 2^64-1 every update that would advance seq is
// refused with ErrInvalid naming seq, and status.json stays byte-identical.
func TestSeq_NeverWraps(t *testing.T) {
	const top = uint64(math.MaxUint64)
	// atTop is a handle whose last write was seq 2^64-1.
	atTop := func(t *testing.T) (jobstore.JobDir, *jobstore.Run) {
		t.Helper()
		dir := writeJob(t, tempDir(t), specAt("j1", 0), statusIn(jobstore.Queued, top-1))
		r, err := jobstore.Start(dir)
		require.NoError(t, err)
		t.Cleanup(func() { _ = r.Close() })
		require.Equal(t, top, r.Status().Seq, "Start may still take the last seq")
		return dir, r
	}
	// Each setup returns the job and the update to try on it.
	tests := []struct {
		name  string
		setup func(t *testing.T) (jobstore.JobDir, func() error)
	}{
		{"start", func(t *testing.T) (jobstore.JobDir, func() error) {
			dir := writeJob(t, tempDir(t), specAt("j1", 0), statusIn(jobstore.Queued, top))
			return dir, func() error {
				r, err := jobstore.Start(dir)
				if err == nil {
					_ = r.Close()
				}
				return err
			}
		}},
		{"progress", func(t *testing.T) (jobstore.JobDir, func() error) {
			dir, r := atTop(t)
			return dir, func() error { return r.Progress(0.5, "half") }
		}},
		{"set message", func(t *testing.T) (jobstore.JobDir, func() error) {
			dir, r := atTop(t)
			return dir, func() error { return r.SetMessage("hello") }
		}},
		{"finish", func(t *testing.T) (jobstore.JobDir, func() error) {
			dir, r := atTop(t)
			return dir, func() error { return r.Finish(jobstore.Outcome{State: jobstore.Succeeded}) }
		}},
		{"reconcile", func(t *testing.T) (jobstore.JobDir, func() error) {
			dir := writeJob(t, tempDir(t), specAt("j1", 0), statusIn(jobstore.Running, top))
			return dir, func() error { _, err := jobstore.Reconcile(dir); return err }
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, update := tt.setup(t)
			before := readFile(t, dir.StatusPath())
			err := update()
			require.ErrorIs(t, err, jobstore.ErrInvalid)
			var e *jobstore.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "seq", e.Subject)
			assert.Equal(t, top, e.Found)
			assert.Contains(t, err.Error(), "wrap")
			assert.Equal(t, string(before), string(readFile(t, dir.StatusPath())), "status.json untouched")
			assert.Equal(t, top, readStatus(t, dir).Seq, "seq never goes back")
		})
	}
}

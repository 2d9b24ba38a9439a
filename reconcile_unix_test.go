//go:build unix

package jobstore_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestReconcile_RunnerKilledBySIGKILLIsLostALiveOneIsNot(t *testing.T) {
	root := tempDir(t)
	var dirs [2]jobstore.JobDir
	var runners [2]*child
	for i := range dirs {
		var err error
		dirs[i], err = jobstore.Submit(root, jobstore.JobSpec{Kind: "test"})
		require.NoError(t, err)
		runners[i] = startRole(t, "runner", dirEnv+"="+string(dirs[i]))
		require.Equal(t, "started "+strconv.Itoa(runners[i].cmd.Process.Pid), runners[i].line(t))
	}
	killed, live := dirs[0], dirs[1]
	prev := readStatus(t, killed)
	require.Equal(t, jobstore.Running, prev.State)

	require.NoError(t, runners[0].cmd.Process.Signal(syscall.SIGKILL))
	err := runners[0].cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	ws, _ := ee.Sys().(syscall.WaitStatus)
	require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "the runner died of SIGKILL: %v", err)
	assert.Equal(t, prev, readStatus(t, killed), "a killed runner writes nothing")

	results, err := jobstore.ReconcileAll(root)
	require.NoError(t, err)
	require.Len(t, results, 2)
	changed := map[jobstore.JobDir]bool{}
	for _, r := range results {
		require.NoError(t, r.Err)
		changed[r.Dir] = r.Changed
	}
	assert.True(t, changed[killed], "the killed runner's job is reconciled")
	assert.False(t, changed[live], "the live runner's job is not")
	requireLost(t, killed, prev)
	liveSt := readStatus(t, live)
	assert.Equal(t, jobstore.Running, liveSt.State)
	assert.Equal(t, runners[1].cmd.Process.Pid, liveSt.PID)

	require.NoError(t, runners[1].cmd.Process.Kill())
	_ = runners[1].cmd.Wait()
	ok, err := jobstore.Reconcile(live)
	require.NoError(t, err)
	assert.True(t, ok, "once killed, the second runner's job is lost too")
}

// irregularLeaseLease is the lease of the dead runner whose lease file was
// replaced: short, so that a whole lease of observation passes quickly.
const irregularLeaseLease = 300 * time.Millisecond

// runnerWithIrregularLease makes a job running attempt 1 for a runner on
// another host that is gone, whose .run-1/lease plant made something other
// than a regular file.
func runnerWithIrregularLease(t *testing.T, root string, plant func(t *testing.T, path string)) jobstore.JobDir {
	t.Helper()
	dir, err := jobstore.Submit(root, jobstore.JobSpec{Kind: "test"})
	require.NoError(t, err)
	st := readStatus(t, dir)
	st.State, st.Seq, st.Attempt, st.Host, st.PID, st.Lease = jobstore.Running, 2, 1, "gone-host", 4242, irregularLeaseLease
	writeRecord(t, dir.StatusPath(), st)
	run := jobstore.RunDirPath(dir, 1)
	require.NoError(t, os.Mkdir(run, 0o755))
	plant(t, filepath.Join(run, jobstore.LeaseName))
	return dir
}

// TestReconcile_ALeaseThatIsNotARegularFileProvesNoLife: a dead runner's
// .run-1/lease that is a FIFO, a link or a directory is never followed nor
// waited on, and is no proof of life: Reconcile and Start do not fail on
// it (not_regular at every call would leave the job running for ever);
// after a whole lease the attempt is judged gone, as with a missing lease,
// and the job is taken over: marked lost by ReconcileAll, started again
// by Start.
func TestReconcile_ALeaseThatIsNotARegularFileProvesNoLife(t *testing.T) {
	outside := filepath.Join(tempDir(t), "counter")
	writeFile(t, outside, []byte("7\n"))
	plants := map[string]func(t *testing.T, path string){
		"FIFO":                   func(t *testing.T, path string) { require.NoError(t, unix.Mkfifo(path, 0o644)) },
		"link to a file outside": func(t *testing.T, path string) { require.NoError(t, os.Symlink(outside, path)) },
		"link to /dev/zero":      func(t *testing.T, path string) { require.NoError(t, os.Symlink("/dev/zero", path)) },
		"directory":              func(t *testing.T, path string) { require.NoError(t, os.Mkdir(path, 0o755)) },
	}
	for name, plant := range plants {
		t.Run(name+"/ReconcileAll", func(t *testing.T) {
			root := tempDir(t)
			dir := runnerWithIrregularLease(t, root, plant)
			changed, err := jobstore.Reconcile(dir)
			require.NoError(t, err, "a lease that is not a regular file is judged, not an error")
			assert.False(t, changed, "not yet watched for a whole lease")

			results := mustReturn(t, "ReconcileAll", func() []jobstore.ReconcileResult {
				results, err := jobstore.ReconcileAll(root)
				require.NoError(t, err)
				return results
			})
			require.Len(t, results, 1)
			require.NoError(t, results[0].Err)
			assert.True(t, results[0].Changed)
			st := readStatus(t, dir)
			require.Equal(t, jobstore.Lost, st.State)
			assert.Contains(t, st.Message, "its lease file is a")
			assert.Equal(t, "7\n", string(readFile(t, outside)), "nothing written through the link")
		})
		t.Run(name+"/Start", func(t *testing.T) {
			dir := runnerWithIrregularLease(t, tempDir(t), plant)
			deadline := time.Now().Add(hangGuard)
			for {
				r, err := jobstore.Start(dir)
				if err == nil {
					_ = r.Close()
					t.Fatal("the job ran again: the runner's attempt was its only one")
				}
				if errors.Is(err, jobstore.ErrWrongState) {
					break // taken over: the runner's attempt, the job's only one, ended lost
				}
				require.ErrorIs(t, err, jobstore.ErrLocked, "until a whole lease has passed, and nothing else")
				assert.Contains(t, err.Error(), "its lease file is a")
				require.True(t, time.Now().Before(deadline), "never taken over: %v", err)
				time.Sleep(irregularLeaseLease / 5)
			}
			st := readStatus(t, dir)
			assert.Equal(t, jobstore.Lost, st.State)
			assert.Contains(t, st.Message, "its lease file is a")
			assert.EqualValues(t, 2, st.Attempt, "taken over in a new attempt")
		})
	}
}

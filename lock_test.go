package jobstore_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func init() {
	// holder: Start the job in JOBSTORE_TEST_DIR, say "started <pid>", hold
	// the lock until stdin closes, then finish and close.
	children["holder"] = func() int {
		r, err := jobstore.Start(jobstore.JobDir(os.Getenv(dirEnv)))
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		fmt.Println("started", os.Getpid())
		_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes stdin (or kills us)
		if err := r.Finish(jobstore.Outcome{State: jobstore.Succeeded}); err != nil {
			fmt.Println("error", err)
			return 1
		}
		if err := r.Close(); err != nil {
			return 1
		}
		return 0
	}
}

func TestLockJob_SecondLockInSameProcessFails(t *testing.T) {
	dir := writeJob(t, tempDir(t), specAt("j1", 0), statusIn(jobstore.Queued, 1))
	first, err := jobstore.LockJob(dir)
	require.NoError(t, err)

	_, err = jobstore.LockJob(dir)
	require.ErrorIs(t, err, jobstore.ErrLocked)
	var e *jobstore.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, dir.LockPath(), e.Path)
	assert.NotEmpty(t, e.Remedy)

	require.NoError(t, first.Unlock())
	second, err := jobstore.LockJob(dir)
	require.NoError(t, err, "an unlocked job locks again")
	require.NoError(t, second.Unlock())
}

func TestLockJob_UnlockKeepsTheLockFileAndIsIdempotent(t *testing.T) {
	dir := writeJob(t, tempDir(t), specAt("j1", 0), nil)
	lk, err := jobstore.LockJob(dir)
	require.NoError(t, err)
	require.NoError(t, lk.Unlock())
	require.NoError(t, lk.Unlock(), "a second Unlock is not an error")
	_, err = os.Stat(dir.LockPath())
	require.NoError(t, err, "job.lock is never deleted")
}

func TestLockJob_NotAJobIsErrNotJob(t *testing.T) {
	root := tempDir(t)
	for name, dir := range map[string]jobstore.JobDir{
		"missing dir": jobstore.JobDir(root + "/nope"),
		"no job.json": jobstore.JobDir(root),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := jobstore.LockJob(dir)
			require.ErrorIs(t, err, jobstore.ErrNotJob)
			_, serr := os.Stat(dir.LockPath())
			assert.True(t, errors.Is(serr, os.ErrNotExist), "no job.lock is created outside a job")
		})
	}
}

func TestLockJob_ErrLockedNamesTheHolderFromStatus(t *testing.T) {
	root := tempDir(t)
	dir, err := jobstore.Submit(root, jobstore.JobSpec{Kind: "test"})
	require.NoError(t, err)
	c := startRole(t, "holder", dirEnv+"="+string(dir))
	pid := c.cmd.Process.Pid
	require.Equal(t, "started "+strconv.Itoa(pid), c.line(t))

	_, err = jobstore.LockJob(dir)
	require.ErrorIs(t, err, jobstore.ErrLocked)
	host, _ := os.Hostname()
	st := readStatus(t, dir)
	assert.Contains(t, err.Error(), "pid "+strconv.Itoa(pid))
	assert.Contains(t, err.Error(), strconv.Quote(host))
	assert.Contains(t, err.Error(), st.StartedAt.Format("2006-01-02T15:04:05Z07:00"), "since started_at")

	_, err = jobstore.Start(dir)
	require.ErrorIs(t, err, jobstore.ErrLocked, "Start fails at once while another process runs the job")

	require.NoError(t, c.stdin.Close())
	require.NoError(t, c.cmd.Wait())
	assert.Equal(t, jobstore.Succeeded, readStatus(t, dir).State)
	lk, err := jobstore.LockJob(dir)
	require.NoError(t, err, "the holder's exit released the lock")
	require.NoError(t, lk.Unlock())
}

func TestLockJob_ErrLockedSaysWhenTheHolderIsUnknown(t *testing.T) {
	tests := []struct {
		name   string
		status string // status.json's content; "" for none
		want   string
	}{
		{"no status", "", "no status.json yet"},
		{"corrupt status", `{"state": "runn`, "unreadable"},
		{"queued status", `{"schema_version":1,"state":"queued","seq":1,"updated_at":"2026-11-30T09:00:00+00:00"}`, "says queued"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeJob(t, tempDir(t), specAt("j1", 0), nil)
			if tc.status != "" {
				require.NoError(t, os.WriteFile(dir.StatusPath(), []byte(tc.status), 0o644))
			}
			lk, err := jobstore.LockJob(dir)
			require.NoError(t, err)
			t.Cleanup(func() { _ = lk.Unlock() })
			_, err = jobstore.LockJob(dir)
			require.ErrorIs(t, err, jobstore.ErrLocked)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

package jobstore_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// holder starts the job in JOBSTORE_TEST_DIR, says "started <pid>", holds
// the lock until stdin closes, then finishes and closes.
func holder() int {
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

func TestLockJob_ErrLockedNamesTheHolderFromTheLockFile(t *testing.T) {
	root := tempDir(t)
	dir, err := jobstore.Submit(root, jobstore.JobSpec{Kind: "test"})
	require.NoError(t, err)
	c := startRole(t, "holder", dirEnv+"="+string(dir))
	pid := c.cmd.Process.Pid
	require.Equal(t, "started "+strconv.Itoa(pid), c.line(t))

	// job.lock holds the documented record of the holder.
	var rec struct {
		PID      int    `json:"pid"`
		Host     string `json:"host"`
		Program  string `json:"program"`
		Since    string `json:"since"`
		PIDScope string `json:"pid_scope"`
		PIDStart string `json:"pid_start"`
	}
	data := readFile(t, dir.LockPath())
	require.True(t, strings.HasSuffix(string(data), "}\n"), "one JSON object and a newline: %q", data)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&rec), "%s", data)
	host, _ := os.Hostname()
	st := readStatus(t, dir)
	assert.Equal(t, pid, rec.PID)
	assert.Equal(t, host, rec.Host)
	exe, err := os.Executable()
	require.NoError(t, err)
	assert.Equal(t, filepath.Base(exe), rec.Program, "the child is this test binary")
	assert.Equal(t, st.PIDScope, rec.PIDScope, "the holder's pid scope, as its running record says")
	assert.Equal(t, st.PIDStart, rec.PIDStart, "the holder's start token, as its running record says")
	since, err := time.Parse("2006-01-02T15:04:05.000000-07:00", rec.Since)
	require.NoError(t, err, "since is written as the records' timestamps are")
	assert.False(t, since.After(*st.StartedAt), "the lock is taken before the run starts")

	_, err = jobstore.LockJob(dir)
	require.ErrorIs(t, err, jobstore.ErrLocked)
	assert.Contains(t, err.Error(), "held by pid "+strconv.Itoa(pid)+" on host "+strconv.Quote(host))
	assert.Contains(t, err.Error(), "as job.lock records it")
	assert.Contains(t, err.Error(), since.Format(time.RFC3339))

	_, err = jobstore.Start(dir)
	require.ErrorIs(t, err, jobstore.ErrLocked, "Start fails at once while another process runs the job")

	require.NoError(t, c.stdin.Close())
	require.NoError(t, c.cmd.Wait())
	assert.Equal(t, jobstore.Succeeded, readStatus(t, dir).State)
	assert.Empty(t, readFile(t, dir.LockPath()), "Unlock (Close) empties job.lock")
	lk, err := jobstore.LockJob(dir)
	require.NoError(t, err, "the holder's exit released the lock")
	require.NoError(t, lk.Unlock())
}

// TestLockJob_WithoutALockRecordErrLockedFallsBackToStatus: a holder whose
// job.lock holds no record (an older jobstore, a failed write) is named as
// status.json records it, and the message says when that is unknown.
func TestLockJob_WithoutALockRecordErrLockedFallsBackToStatus(t *testing.T) {
	started := `{"schema_version":1,"state":"running","seq":2,"pid":4242,"host":"render-3",` +
		`"started_at":"2026-11-30T09:00:00+00:00","updated_at":"2026-11-30T09:05:00+00:00"}`
	tests := []struct {
		name   string
		lock   string // job.lock's content while held
		status string // status.json's content; "" for none
		want   string
	}{
		{"no status", "", "", "no status.json yet"},
		{"corrupt status", "", `{"state": "runn`, "unreadable"},
		{"queued status", "", `{"schema_version":1,"state":"queued","seq":1,"updated_at":"2026-11-30T09:00:00+00:00"}`, "says queued"},
		{"running status", "", started, `held by pid 4242 on host "render-3", running since 2026-11-30T09:00:00Z`},
		{"garbage in job.lock", "not json\n", started, `held by pid 4242 on host "render-3"`},
		{"record without pid", `{"host":"x"}` + "\n", started, `held by pid 4242 on host "render-3"`},
		{"oversized job.lock", `{"pid":7,"host":"` + strings.Repeat("h", 5000) + `"}`, started, `held by pid 4242 on host "render-3"`},
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
			require.NoError(t, os.WriteFile(dir.LockPath(), []byte(tc.lock), 0o644))
			_, err = jobstore.LockJob(dir)
			require.ErrorIs(t, err, jobstore.ErrLocked)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "job.lock records it")
		})
	}
}

// TestLockJob_LeavesItsRecordAloneWhateverTheFileHeld: whatever job.lock
// held when it was locked (nothing, as Unlock leaves it; a dead holder's
// record, shorter or longer than this process's; garbage), the holder's
// record is then all the file holds: one JSON object and a newline, with no
// tail of what was there.
func TestLockJob_LeavesItsRecordAloneWhateverTheFileHeld(t *testing.T) {
	tests := []struct {
		name, before string
	}{
		{"empty", ""},
		{"shorter record", `{"pid":7}` + "\n"},
		{"longer record", `{"pid":7,"host":"` + strings.Repeat("h", 600) + `"}` + "\n"},
		{"longer garbage", strings.Repeat("x", 3000)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeJob(t, tempDir(t), specAt("j1", 0), nil)
			require.NoError(t, os.WriteFile(dir.LockPath(), []byte(tc.before), 0o644))
			lk, err := jobstore.LockJob(dir)
			require.NoError(t, err)
			t.Cleanup(func() { _ = lk.Unlock() })
			data := readFile(t, dir.LockPath())
			require.True(t, strings.HasSuffix(string(data), "}\n"), "one JSON object and a newline: %q", data)
			require.Equal(t, 1, bytes.Count(data, []byte("\n")), "one line: %q", data)
			var rec struct {
				PID int `json:"pid"`
			}
			require.NoError(t, json.Unmarshal(data, &rec), "%q", data)
			assert.Equal(t, os.Getpid(), rec.PID)
		})
	}
}

//go:build linux

package faulttest_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
	ft "github.com/axqua/jobstore/internal/faulttest"
)

// A network filesystem client answers ESTALE while it still holds the
// handle of a file that another host replaced (GlusterFS: for up to about a
// second). These tests make the FUSE server answer ESTALE to the open or
// the read of status.json, through the real system calls, and check the
// readers' budget for it: 2 s of reopening, spent by no other error, and
// not given to a torn file.

// staleRetryFor is the readers' budget for a stale handle, as
// ReadJSONTolerant documents it.
const staleRetryFor = 2 * time.Second

func TestReadStatus_StaleHandleIsReopenedUntilItReads(t *testing.T) {
	tests := []struct {
		name  string
		op    ft.Op
		times int
	}{
		// More than DefaultReadAttempts: the torn-read attempts alone would give up.
		{"open fails with ESTALE", ft.Open, 3 * jobstore.DefaultReadAttempts},
		{"read fails with ESTALE", ft.Read, 3 * jobstore.DefaultReadAttempts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := mountFaulty(t)
			job := newJob(t, fsys)
			fsys.Inject(ft.Fault{Op: tt.op, Match: ft.Named(jobstore.StatusFile), Errno: syscall.ESTALE, Times: tt.times})

			st, err := jobstore.ReadStatus(job)

			require.NoError(t, err, "%d stale handles in a row are within the readers' budget", tt.times)
			assert.Equal(t, jobstore.Running, st.State)
			assert.Equal(t, uint64(1), st.Seq)
			calls := fsys.Calls(tt.op, ft.Named(jobstore.StatusFile))
			assert.Len(t, calls, tt.times+1, "every ESTALE answered, then one %s that worked", tt.op)
			assert.Equal(t, syscall.Errno(0), calls[len(calls)-1].Errno)
		})
	}
}

// A file that opened and is then not found by a read was replaced after the
// open (GlusterFS's open-behind opens at the server only at the first read
// or stat): the reader reopens it, and never answers "no status.json".
func TestReadStatus_FileGoneAfterItsOpenIsReopenedNotAbsent(t *testing.T) {
	fsys := mountFaulty(t)
	job := newJob(t, fsys)
	fsys.Inject(ft.Fault{Op: ft.Read, Match: ft.Named(jobstore.StatusFile), Errno: syscall.ENOENT, Times: 3 * jobstore.DefaultReadAttempts})

	st, err := jobstore.ReadStatus(job)

	require.NoError(t, err)
	require.NotNil(t, st, "a status.json that opened is there: the reader must not call it absent")
	assert.Equal(t, uint64(1), st.Seq)

	fsys.Clear()
	fsys.Inject(ft.Fault{Op: ft.Read, Match: ft.Named(jobstore.StatusFile), Errno: syscall.ENOENT}) // every read
	st, err = jobstore.ReadStatus(job)
	assert.Nil(t, st)
	require.Error(t, err, "a file that keeps vanishing after its open is an error, not an absent file")
	assert.NotErrorIs(t, err, os.ErrNotExist, "only a failed open means absent: %v", err)
	assert.Equal(t, jobstore.CodeIO, jobstore.ErrorCode(err))
}

// WithRetries sets the torn-read attempts only: one attempt still bears
// stale handles for the whole budget.
func TestReadJSONTolerant_StaleHandleBudgetIsNotTheTornReadAttempts(t *testing.T) {
	fsys := mountFaulty(t)
	job := newJob(t, fsys)
	fsys.Inject(ft.Fault{Op: ft.Open, Match: ft.Named(jobstore.StatusFile), Errno: syscall.ESTALE, Times: 6})

	var v map[string]any
	found, err := jobstore.ReadJSONTolerant(job.StatusPath(), &v, jobstore.WithRetries(1, 0))

	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, "running", v["state"])
	assert.Len(t, fsys.Calls(ft.Open, ft.Named(jobstore.StatusFile)), 7)
}

func TestReadStatus_StaleHandleBeyondTheBudgetIsAnIOErrorWrappingESTALE(t *testing.T) {
	fsys := mountFaulty(t)
	job := newJob(t, fsys)
	before := backingBytes(t, fsys, jobstore.StatusFile)
	fsys.Inject(ft.Fault{Op: ft.Open, Match: ft.Named(jobstore.StatusFile), Errno: syscall.ESTALE}) // every open

	start := time.Now()
	st, err := jobstore.ReadStatus(job)
	took := time.Since(start)

	assert.Nil(t, st)
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.ESTALE)
	assert.Equal(t, jobstore.CodeIO, jobstore.ErrorCode(err), "a stale handle is an I/O error, not damage: %v", err)
	assert.NotErrorIs(t, err, jobstore.ErrCorrupt)
	var e *jobstore.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, job.StatusPath(), e.Path)
	assert.Contains(t, e.Msg, "stale")
	assert.NotEmpty(t, e.Remedy)
	// The budget was spent (a lower bound, which no load can break), on
	// more reopenings than the torn-read attempts allow.
	assert.GreaterOrEqual(t, took, staleRetryFor, "gave up on a stale handle before its budget was spent")
	assert.Greater(t, len(fsys.Calls(ft.Open, ft.Named(jobstore.StatusFile))), 2*jobstore.DefaultReadAttempts)
	assert.Equal(t, before, backingBytes(t, fsys, jobstore.StatusFile), "a reader changes nothing")
}

// A torn file gets DefaultReadAttempts reads, as before: the stale-handle
// budget does not make a damaged record slower to report.
func TestReadStatus_TornFileGetsOnlyItsAttempts(t *testing.T) {
	fsys := mountFaulty(t)
	job := newJob(t, fsys)
	require.NoError(t, os.WriteFile(filepath.Join(fsys.Backing, jobID, jobstore.StatusFile), []byte(`{"schema_version": 1, "sta`), 0o644))
	fsys.Clear()

	_, err := jobstore.ReadStatus(job)

	require.ErrorIs(t, err, jobstore.ErrCorrupt)
	assert.Len(t, fsys.Calls(ft.Open, ft.Named(jobstore.StatusFile)), jobstore.DefaultReadAttempts,
		"a torn file is read DefaultReadAttempts times, no more")
}

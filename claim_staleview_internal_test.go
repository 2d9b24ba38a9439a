package jobstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/axqua/jobstore/internal/attempt"
	"github.com/stretchr/testify/require"
)

// A process on another host whose view of status.json lags behind (a
// network filesystem client's caches: GlusterFS keeps what it fetched for
// about a second) reads a queued job whose attempt 1 was in fact cancelled
// and ended by its runner. Its claim passes attempt 1 (over) and takes
// attempt 2; going on from the old record would write a second terminal
// record at the same seq over the first. It must read again until the
// record catches up, and refuse, writing nothing, if it never does.

// oldView makes such a job: attempt 1 cancelled it (seq 2) and ended; the
// returned bytes are that record. status.json is then put back to the
// queued record (seq 1), as the lagging host still reads it.
func oldView(t *testing.T) (dir JobDir, queued, cancelled []byte) {
	t.Helper()
	dir = submitQueued(t)
	queued, err := os.ReadFile(dir.StatusPath())
	require.NoError(t, err)
	require.NoError(t, RequestCancel(dir, CancelRequest{RequestedBy: "host A", Reason: "old view"}))
	st := mustStatus(t, dir)
	require.Equal(t, Cancelled, st.State)
	require.EqualValues(t, 1, st.Attempt)
	require.EqualValues(t, 2, st.Seq)
	require.FileExists(t, filepath.Join(fencedPath(dir, 1), attempt.EndMarker), "attempt 1 ended by its owner says so")
	cancelled, err = os.ReadFile(dir.StatusPath())
	require.NoError(t, err)
	putStatus(t, dir, queued)
	return dir, queued, cancelled
}

// putStatus replaces status.json with b in one rename, as a record appears
// to a reader whose cache catches up.
func putStatus(t *testing.T, dir JobDir, b []byte) {
	t.Helper()
	tmp := filepath.Join(string(dir), "view.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Error(err)
		return
	}
	var err error
	for range 50 { // Windows: a reader's open handle may refuse the rename for a moment
		if err = os.Rename(tmp, dir.StatusPath()); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Error(err)
}

// claimFromOldView is Start up to its claim, from the record it reads: the
// claim's error, with the claim withdrawn on success.
func claimFromOldView(t *testing.T, dir JobDir) error {
	t.Helper()
	const op = "start"
	o, err := newStartOptions(op, dir, nil)
	require.NoError(t, err)
	jd, err := openJobDir(op, dir)
	require.NoError(t, err)
	defer jd.Close()
	lk, err := lockJobIn(op, jd)
	require.NoError(t, err)
	defer func() { require.NoError(t, lk.Unlock()) }()
	_, last, err := readForStart(op, jd, nil)
	require.NoError(t, err)
	require.Equal(t, Queued, last.State, "the old view")
	c, _, _, err := (&claimant{op, jd, lk, o.claimOptions}).forStart(last)
	if err == nil {
		_ = c.Withdraw()
	}
	return err
}

func TestClaim_OldViewOfAnEndedAttemptNeverWritesOverItsRecord(t *testing.T) {
	for _, tc := range []struct {
		name     string
		catchUp  bool // the view catches up after a while
		claimant func(t *testing.T, dir JobDir)
	}{
		{"canceller/view stays old", false, func(t *testing.T, dir JobDir) {
			changed, err := cancelClaimed(dir, &Lock{dir: dir}, findCancel(dir)) // the other host's lock
			require.NoError(t, err)
			require.False(t, changed, "the canceller must write nothing")
		}},
		{"canceller/view catches up", true, func(t *testing.T, dir JobDir) {
			changed, err := cancelClaimed(dir, &Lock{dir: dir}, findCancel(dir))
			require.NoError(t, err)
			require.False(t, changed, "the job is cancelled already")
		}},
		{"Start/view stays old", false, func(t *testing.T, dir JobDir) {
			err := claimFromOldView(t, dir)
			require.ErrorIs(t, err, ErrLocked)
			var e *Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, fencedPath(dir, 1), e.Path)
			require.Contains(t, e.Msg, "view of the shared filesystem is behind")
			require.Contains(t, e.Remedy, filepath.Join(fencedPath(dir, 1), attempt.EndMarker))
			_, err = Start(dir)
			require.ErrorIs(t, err, ErrCancelRequested, "a job with a request is refused as such")
		}},
		{"Start/view catches up", true, func(t *testing.T, dir JobDir) {
			err := claimFromOldView(t, dir)
			require.ErrorIs(t, err, ErrWrongState, "a cancelled job is not started")
			var e *Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, "state", e.Subject)
			require.Equal(t, string(Cancelled), e.Found)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, queued, cancelled := oldView(t)
			want, done := queued, make(chan struct{})
			if tc.catchUp {
				want = cancelled
				go func() {
					defer close(done)
					time.Sleep(staleViewBudget / 5)
					putStatus(t, dir, cancelled)
				}()
			} else {
				close(done)
			}
			tc.claimant(t, dir)
			<-done

			got, err := os.ReadFile(dir.StatusPath())
			require.NoError(t, err)
			require.Equal(t, string(want), string(got), "status.json must be what attempt 1 left (or the old view), never a new record")
			for _, p := range []string{runPath(dir, 2), fencedPath(dir, 2)} {
				_, err := os.Lstat(p)
				require.True(t, errors.Is(err, fs.ErrNotExist), "%s: the claim of attempt 2 must be withdrawn (%v)", p, err)
			}
			requireNoTemps(t, dir)
		})
	}
}

func requireNoTemps(t *testing.T, dir JobDir) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(string(dir), func(path string, d fs.DirEntry, err error) error {
		if err == nil && IsTempName(d.Name()) {
			t.Errorf("temp file left: %s", path)
		}
		return err
	}))
}

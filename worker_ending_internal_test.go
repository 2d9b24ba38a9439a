package jobstore

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

const (
	// endWait bounds how long a held end waits for what the test expects
	// to happen meanwhile.
	endWait = 10 * time.Second
	// endQuiet is how long a held end gives a Worker to start a job it
	// must not start: long beside a take and a Start (a few ms).
	endQuiet = 300 * time.Millisecond
)

// holdEnds makes f run before each job's end is written (endSeam), for
// the test.
func holdEnds(t *testing.T, f func(id string)) {
	t.Helper()
	endSeam.Store(&f)
	t.Cleanup(func() { endSeam.Store(nil) })
}

// submitIDs submits a job of kind "k" under each of ids, in that order
// (the order a Worker takes them).
func submitIDs(t *testing.T, root string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		_, err := Submit(root, JobSpec{ID: id, Kind: "k"})
		require.NoError(t, err)
		time.Sleep(time.Millisecond) // submitted_at orders them
	}
}

// With WithParallel(1) a job's end is written while the next job is taken
// and started, never while two handlers run; WithUntilIdle returns only
// once every end is written.
func TestWorker_EndOverlapsTheNextStartAndIsWrittenBeforeRunReturns(t *testing.T) {
	root := testdir.New(t)
	submitIDs(t, root, "a", "b")
	bStarted := make(chan struct{})
	var overlapped atomic.Bool
	holdEnds(t, func(id string) {
		if id != "a" {
			return
		}
		select {
		case <-bStarted:
			overlapped.Store(true)
		case <-time.After(endWait):
		}
	})
	var running, most atomic.Int32
	w, err := NewWorker(root, func(_ context.Context, run *Run) error {
		n := running.Add(1)
		defer running.Add(-1)
		if n > most.Load() {
			most.Store(n)
		}
		if run.Dir().ID() == "b" {
			close(bStarted)
		}
		return nil
	}, WithUntilIdle())
	require.NoError(t, err)
	require.NoError(t, w.Run(context.Background()))
	require.True(t, overlapped.Load(), "b's handler did not start while a's end was being written")
	require.EqualValues(t, 1, most.Load(), "handlers at once with WithParallel(1)")
	for _, id := range []string{"a", "b"} {
		st, err := ReadStatus(JobDir(root + "/" + id))
		require.NoError(t, err)
		require.Equal(t, Succeeded, st.State, "job %s once Run returned", id)
	}
}

// At most n ends are written at once: with WithParallel(1), a handler that
// returns while an end is written keeps its slot until that end is done,
// so no third job starts meanwhile.
func TestWorker_AtMostParallelEndsAtOnce(t *testing.T) {
	root := testdir.New(t)
	submitIDs(t, root, "a", "b", "c")
	bReturning := make(chan struct{})
	var aEnding atomic.Bool
	var mu sync.Mutex
	var startedWhileAEnded []string
	holdEnds(t, func(id string) {
		if id != "a" {
			return
		}
		aEnding.Store(true)
		defer aEnding.Store(false)
		select {
		case <-bReturning:
			time.Sleep(endQuiet) // c must not start now
		case <-time.After(endWait):
		}
	})
	w, err := NewWorker(root, func(_ context.Context, run *Run) error {
		id := run.Dir().ID()
		if aEnding.Load() {
			mu.Lock()
			startedWhileAEnded = append(startedWhileAEnded, id)
			mu.Unlock()
		}
		if id == "b" {
			close(bReturning)
		}
		return nil
	}, WithUntilIdle())
	require.NoError(t, err)
	require.NoError(t, w.Run(context.Background()))
	require.Equal(t, []string{"b"}, startedWhileAEnded, "the handlers that started while a's end was held")
	for _, id := range []string{"a", "b", "c"} {
		st, err := ReadStatus(JobDir(root + "/" + id))
		require.NoError(t, err)
		require.Equal(t, Succeeded, st.State, "job %s", id)
	}
}

// A slot freed while a job's Start runs is taken at once: with
// WithParallel(2), b is picked while a's handler holds the other slot, and
// c starts while b's Start is still held, once a's handler returned.
func TestWorker_SlotFreedDuringAStartIsTakenAtOnce(t *testing.T) {
	root := testdir.New(t)
	submitIDs(t, root, "a", "b", "c")
	aReturn, cStarted := make(chan struct{}), make(chan struct{})
	var cDuringB atomic.Bool
	f := func(dir string) { // in b's Start, before running is written
		if filepath.Base(dir) != "b" {
			return
		}
		close(aReturn) // both slots are held now: a's handler and b's Start
		select {
		case <-cStarted:
			cDuringB.Store(true)
		case <-time.After(endWait):
		}
	}
	startSeam.Store(&f)
	t.Cleanup(func() { startSeam.Store(nil) })
	w, err := NewWorker(root, func(_ context.Context, run *Run) error {
		switch run.Dir().ID() {
		case "a":
			<-aReturn
		case "c":
			close(cStarted)
		}
		return nil
	}, WithParallel(2), WithUntilIdle())
	require.NoError(t, err)
	require.NoError(t, w.Run(context.Background()))
	require.True(t, cDuringB.Load(), "c did not start while b's Start was held, though a's handler had returned")
}

package fsevents

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore/internal/testdir"
)

// awaitPoll is the safety poll of the tests that rely on it.
const awaitPoll = 10 * time.Millisecond

// mustFire waits for found to be signalled.
func mustFire(t *testing.T, found <-chan struct{}) {
	t.Helper()
	select {
	case <-found:
	case <-time.After(guard):
		t.Fatalf("the await did not report the name within %v", guard)
	}
}

// mustNotFire fails if found is signalled within quiet.
func mustNotFire(t *testing.T, found <-chan struct{}) {
	t.Helper()
	select {
	case <-found:
		t.Fatal("the await reported a name that does not exist")
	case <-time.After(quiet):
	}
}

// TestAwait_EachPathAloneSuffices: events with no poll to speak of, and the
// poll with events disabled (as on a filesystem that delivers none), each
// report a published name, once; neither reports other names written in the
// directory, nor the name's temp file.
func TestAwait_EachPathAloneSuffices(t *testing.T) {
	for _, tt := range []struct {
		name   string
		poll   time.Duration
		events bool
	}{
		{"events", time.Hour, true},
		{"poll", awaitPoll, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := newDir(t)
			found := make(chan struct{}, 2)
			var calls atomic.Int32
			a := StartAwait(dir, "cancel.json", tt.poll, tt.events, func() { calls.Add(1); found <- struct{}{} })
			t.Cleanup(a.Stop)
			for i := range 5 {
				publish(t, dir, "status.json", fmt.Sprint(i))
			}
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".cancel.json123"), nil, 0o644))
			mustNotFire(t, found)
			require.NoError(t, os.Remove(filepath.Join(dir, ".cancel.json123")))
			publish(t, dir, "cancel.json", "{}")
			mustFire(t, found)
			a.Stop()
			require.Equal(t, int32(1), calls.Load(), "reported once")
		})
	}
}

// TestAwait_NameAlreadyThereIsReportedAtOnce: a name that exists before
// the await starts is reported before StartAwait returns, with no event
// and no poll to help.
func TestAwait_NameAlreadyThereIsReportedAtOnce(t *testing.T) {
	dir := newDir(t)
	publish(t, dir, "cancel.json", "{}")
	reported := false
	a := StartAwait(dir, "cancel.json", time.Hour, false, func() { reported = true })
	require.True(t, reported)
	a.Stop()
}

// TestAwait_StoppedAwaitNeverReports: after Stop returns, found is never
// called, even when the name appears.
func TestAwait_StoppedAwaitNeverReports(t *testing.T) {
	dir := newDir(t)
	found := make(chan struct{}, 1)
	a := StartAwait(dir, "cancel.json", awaitPoll, true, func() { found <- struct{}{} })
	a.Stop()
	a.Stop() // twice is fine
	publish(t, dir, "cancel.json", "{}")
	mustNotFire(t, found)
}

// TestAwait_DirectoryMadeAgainIsHeardByEvents: the directory awaited in is
// removed and made again; the name published in the new one is reported
// by an event (the poll is an hour).
func TestAwait_DirectoryMadeAgainIsHeardByEvents(t *testing.T) {
	requireRepairs(t)
	root := newDir(t)
	dir := filepath.Join(root, "j1")
	require.NoError(t, os.Mkdir(dir, 0o755))
	found := make(chan struct{}, 1)
	a := StartAwait(dir, "cancel.json", time.Hour, true, func() { found <- struct{}{} })
	t.Cleanup(a.Stop)
	require.NoError(t, os.RemoveAll(dir))
	waitHeld(t, root)
	require.NoError(t, os.Mkdir(dir, 0o755))
	publish(t, dir, "cancel.json", "{}")
	mustFire(t, found)
}

// BenchmarkAwait: from publishing the name to the await reporting it, with
// directory events against the safety poll alone at 100 ms (what a
// filesystem without events gets). Compare the two ns/op of one run: the
// await is timed from the moment it is in place, so the poll's cost is
// about one interval.
func BenchmarkAwait(b *testing.B) {
	for _, bb := range []struct {
		name   string
		poll   time.Duration
		events bool
	}{
		{"events", time.Hour, true},
		{"poll-100ms", 100 * time.Millisecond, false},
	} {
		b.Run(bb.name, func(b *testing.B) {
			root := testdir.New(b)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dir := filepath.Join(root, fmt.Sprint("j", i))
				require.NoError(b, os.Mkdir(dir, 0o755))
				found := make(chan struct{}, 1)
				a := StartAwait(dir, "cancel.json", bb.poll, bb.events, func() { found <- struct{}{} })
				b.StartTimer()
				tmp := filepath.Join(dir, ".cancel.json1")
				require.NoError(b, os.WriteFile(tmp, []byte("{}"), 0o644))
				require.NoError(b, os.Rename(tmp, filepath.Join(dir, "cancel.json")))
				<-found
				b.StopTimer()
				a.Stop()
			}
		})
	}
}

// TestAwaitLater_ReportsANameThereAlreadyAndOneThatAppears: StartAwaitLater
// returns before its watch is in place, yet misses neither a name there
// before it and one published after it (by an event: the poll is an hour);
// stopped, it never reports.
func TestAwaitLater_ReportsANameThereAlreadyAndOneThatAppears(t *testing.T) {
	t.Run("there already", func(t *testing.T) {
		dir := newDir(t)
		publish(t, dir, "cancel.json", "{}")
		found := make(chan struct{}, 1)
		a := StartAwaitLater(dir, "cancel.json", time.Hour, true, func() { found <- struct{}{} })
		t.Cleanup(a.Stop)
		mustFire(t, found)
	})
	t.Run("appears", func(t *testing.T) {
		dir := newDir(t)
		found := make(chan struct{}, 1)
		a := StartAwaitLater(dir, "cancel.json", time.Hour, true, func() { found <- struct{}{} })
		t.Cleanup(a.Stop)
		publish(t, dir, "cancel.json", "{}")
		mustFire(t, found)
	})
	t.Run("stopped", func(t *testing.T) {
		dir := newDir(t)
		found := make(chan struct{}, 1)
		a := StartAwaitLater(dir, "cancel.json", awaitPoll, true, func() { found <- struct{}{} })
		a.Stop()
		publish(t, dir, "cancel.json", "{}")
		mustNotFire(t, found)
	})
}

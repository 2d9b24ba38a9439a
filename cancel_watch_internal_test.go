package jobstore

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

// Timing of the watch tests: watchGuard is a deadlock guard, never a speed
// limit; watchNever is how long a watch that must not fire is given to
// misbehave (an event or a few polls).
const (
	watchGuard = 20 * time.Second
	watchNever = 100 * time.Millisecond
	watchPoll  = 10 * time.Millisecond
)

// publishCancel publishes a cancel.json in dir the way RequestCancel does.
func publishCancel(t testing.TB, dir JobDir) {
	t.Helper()
	data, err := marshalRecord(CancelRequest{SchemaVersion: CancelSchemaVersion, JobID: dir.ID(), RequestedAt: Now()})
	require.NoError(t, err)
	require.NoError(t, writeRecord(jobRecord(dir, CancelFile), data, newWriteOptions(nil), createOnly))
}

// mustFire waits for found to be signalled.
func mustFire(t *testing.T, found <-chan struct{}) {
	t.Helper()
	select {
	case <-found:
	case <-time.After(watchGuard):
		t.Fatalf("the watch did not report cancel.json within %v", watchGuard)
	}
}

// mustNotFire fails if found is signalled within watchNever.
func mustNotFire(t *testing.T, found <-chan struct{}) {
	t.Helper()
	select {
	case <-found:
		t.Fatal("the watch reported a cancel request that does not exist")
	case <-time.After(watchNever):
	}
}

// TestCancelWatch_EachPathAloneSuffices: events with no poll to speak of,
// and the poll with events disabled (as on a filesystem that delivers none),
// each report a published cancel.json; neither reports the runner's own
// status writes, nor temp files.
func TestCancelWatch_EachPathAloneSuffices(t *testing.T) {
	for _, tt := range []struct {
		name     string
		interval time.Duration
		events   bool
	}{
		{"events", time.Hour, true},
		{"poll", watchPoll, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := JobDir(filepath.Join(testdir.New(t), "j1"))
			require.NoError(t, os.Mkdir(string(dir), 0o755))
			found := make(chan struct{}, 2)
			var calls atomic.Int32
			w := startCancelWatch(dir, tt.interval, tt.events, func() { calls.Add(1); found <- struct{}{} })
			t.Cleanup(w.stop)
			<-w.ready
			for i := range 5 {
				require.NoError(t, WriteStatus(dir, JobStatus{State: Running, Seq: uint64(i + 1)}))
			}
			require.NoError(t, os.WriteFile(filepath.Join(string(dir), ".cancel.json123"), nil, 0o644))
			mustNotFire(t, found)
			require.NoError(t, os.Remove(filepath.Join(string(dir), ".cancel.json123")))
			publishCancel(t, dir)
			mustFire(t, found)
			w.stop()
			require.Equal(t, int32(1), calls.Load(), "reported once")
		})
	}
}

// TestCancelWatch_RequestAlreadyThereIsReportedAtOnce: a cancel.json that
// exists before the watch starts is found by its first look, with no
// event and no poll to help.
func TestCancelWatch_RequestAlreadyThereIsReportedAtOnce(t *testing.T) {
	dir := JobDir(testdir.New(t))
	publishCancel(t, dir)
	found := make(chan struct{}, 1)
	w := startCancelWatch(dir, time.Hour, false, func() { found <- struct{}{} })
	t.Cleanup(w.stop)
	mustFire(t, found)
}

// TestCancelWatch_StoppedWatchNeverReports: after stop returns, found is
// never called, even when cancel.json appears.
func TestCancelWatch_StoppedWatchNeverReports(t *testing.T) {
	dir := JobDir(testdir.New(t))
	found := make(chan struct{}, 1)
	w := startCancelWatch(dir, watchPoll, true, func() { found <- struct{}{} })
	w.stop()
	w.stop() // twice is fine
	publishCancel(t, dir)
	mustNotFire(t, found)
}

// BenchmarkCancelWatch: from publishing cancel.json to the watch reporting
// it (the publish's fsyncs included), with directory events against the
// safety poll alone at 100 ms (what a filesystem without events gets).
// Compare the two ns/op of one run: the watch is timed from the moment it is
// in place, so the poll's cost is about one interval.
func BenchmarkCancelWatch(b *testing.B) {
	for _, bb := range []struct {
		name     string
		interval time.Duration
		events   bool
	}{
		{"events", time.Hour, true},
		{"poll-100ms", 100 * time.Millisecond, false},
	} {
		b.Run(bb.name, func(b *testing.B) {
			root := testdir.New(b)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dir := JobDir(filepath.Join(root, fmt.Sprint("j", i)))
				require.NoError(b, os.Mkdir(string(dir), 0o755))
				found := make(chan struct{}, 1)
				w := startCancelWatch(dir, bb.interval, bb.events, func() { found <- struct{}{} })
				<-w.ready // measure the event or the poll, not the first look
				b.StartTimer()
				publishCancel(b, dir)
				<-found
				b.StopTimer()
				w.stop()
			}
		})
	}
}

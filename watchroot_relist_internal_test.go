package jobstore

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore/internal/dirstamp"
	"github.com/axqua/jobstore/internal/testdir"
)

// TestWatchRoot_LostEventsAreMadeUpByAStatOfEachJob: when events were
// lost (an overflow of the OS's queue), the watch lists the root again and
// stats each job directory, and reads again exactly the jobs whose
// directory changed since their last read, and the job added meanwhile.
// The watch is driven by hand, without its goroutine, so that the changes'
// own events can be dropped.
func TestWatchRoot_LostEventsAreMadeUpByAStatOfEachJob(t *testing.T) {
	root := testdir.New(t)
	var dirs []JobDir
	for i := range 20 {
		dir := JobDir(filepath.Join(root, fmt.Sprintf("job-%02d", i)))
		require.NoError(t, WriteSpec(dir, JobSpec{ID: dir.ID(), Kind: "test"}, NoSync()))
		require.NoError(t, WriteStatus(dir, JobStatus{State: Running, Seq: 1}, NoSync()))
		dirs = append(dirs, dir)
	}
	w, err := newRootWatch(root, watchOptions{poll: time.Hour, events: true}, nil)
	require.NoError(t, err)
	t.Cleanup(w.releaseAll)
	if w.sink == nil {
		t.Skip("no file system events here: nothing to lose")
	}
	w.local = true // whatever the temp directory's filesystem: its jobs are left to their events
	w.startScan()
	for w.scanned != nil {
		<-w.scanReady
		w.takeScan()
	}
	w.settle(len(dirs))
	require.Empty(t, w.polled, "every job is left to its events")
	// A tick after the listing's reads, one more read of each makes its
	// stamp clean (cleanStamp); from then on an unchanged job is not read.
	all := map[*rootJob]struct{}{}
	tick := time.Duration(0)
	for _, j := range w.jobs {
		all[j] = struct{}{}
		tick = max(tick, dirstamp.Tick(j.stamp.stamp.Mtime))
	}
	time.Sleep(tick)
	for range 2 {
		for j := w.toRead.peek(); j != nil; j = w.toRead.peek() {
			w.toRead.pop()
			j.waiting, j.want = false, 0 // as if read
		}
		w.gen++
		w.statJob(all, w.readClock())
	}
	require.Empty(t, w.toRead.items[w.toRead.head:], "nothing changed since the clean reads")

	require.NoError(t, WriteStatus(dirs[3], JobStatus{State: Running, Seq: 2}, NoSync()))
	require.NoError(t, RequestCancel(dirs[7], CancelRequest{Reason: "lost"}))
	added := JobDir(filepath.Join(root, "added"))
	require.NoError(t, WriteSpec(added, JobSpec{ID: "added", Kind: "test"}, NoSync()))
	time.Sleep(100 * time.Millisecond) // let their events reach the sink
	w.sink.Take(nil)                   // and drop them
	w.sink.Lose()
	w.onEvents()

	var read []string
	for j := w.toRead.peek(); j != nil; j = w.toRead.peek() {
		w.toRead.pop()
		read = append(read, j.name)
	}
	assert.ElementsMatch(t, []string{"job-03", "job-07", "added"}, read)
}

package jobstore

import (
	"testing"
	"time"

	"github.com/axqua/jobstore/internal/dirstamp"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// takeWait bounds how long a take may wait while a look is stuck in a
// file system call: it must not wait for it at all.
const takeWait = 5 * time.Second

// A look's file system calls are made without the view's memory lock: a
// take (and a settle) goes on while a look waits on a stat that does not
// return (a hung network filesystem, here a stat that blocks).
func TestNextCache_TakeDoesNotWaitForALooksFileSystemCalls(t *testing.T) {
	root := testdir.New(t)
	submitTest(t, root, "q", Queued)
	submitTest(t, root, "r", Running) // stated at every look
	tc := newTestNextCache(root, time.Hour)
	names, _, _ := tc.lookCounting(t)
	require.Equal(t, []string{"q"}, names)

	entered, release := make(chan struct{}), make(chan struct{})
	tc.stat = func(d *dirstamp.Dir, name string) (dirstamp.Stamp, error) {
		if name == "r" {
			close(entered)
			<-release
		}
		return d.Lstat(name)
	}
	looked := make(chan error, 1)
	go func() {
		_, _, err := tc.look()
		looked <- err
	}()
	<-entered

	took := make(chan *nextEntry, 1)
	go func() {
		e, _ := tc.takeBest(nil)
		if e != nil {
			tc.settle(e, errNotCurrent)
		}
		took <- e
	}()
	select {
	case e := <-took:
		require.NotNil(t, e)
		require.Equal(t, "q", e.name)
	case <-time.After(takeWait):
		close(release)
		t.Fatal("a take waited for a look's stat")
	}
	close(release)
	require.NoError(t, <-looked)
}

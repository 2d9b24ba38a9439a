package jobstore

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore/internal/fsevents"
	"github.com/axqua/jobstore/internal/testdir"
)

// viewEventWait bounds how long a test waits for a change to reach a
// consumer of a rootView.
const viewEventWait = 10 * time.Second

// TestRootView_ConsumersShareADirectoryUntilTheLastLeaves: two consumers
// of one rootView that follow the same directory, for different names,
// share one subscription of it; each gets the changes of the names it
// wants and no other, both get a loss of events, and the subscription
// lasts until the last of them leaves.
func TestRootView_ConsumersShareADirectoryUntilTheLastLeaves(t *testing.T) {
	root := testdir.New(t)
	dir := filepath.Join(root, "job")
	require.NoError(t, os.Mkdir(dir, 0o755))
	v := newRootView(root)
	t.Cleanup(v.end)
	a, b := v.consumer(), v.consumer()
	if v.subscribe(a, dir, []string{StatusFile}) == nil {
		t.Skip("no file system events here: nothing to share")
	}
	require.NotNil(t, v.subscribe(b, dir, []string{CancelFile}))
	require.Equal(t, 1, fsevents.Subscriptions(dir), "one subscription for both")

	require.NoError(t, os.WriteFile(filepath.Join(dir, CancelFile), nil, 0o644))
	require.Equal(t, []string{CancelFile}, awaitNames(t, b), "b wants cancel.json")
	require.NoError(t, os.WriteFile(filepath.Join(dir, StatusFile), nil, 0o644))
	require.Equal(t, []string{StatusFile}, awaitNames(t, a), "a wants status.json, and was never told of cancel.json")

	v.sink.Lose()
	for name, k := range map[string]*fsevents.Sink{"a": a, "b": b} {
		awaitChanges(t, k, func(_ []fsevents.Change, lost bool) bool { return lost }, name+" is told that events were lost")
	}

	v.leave(a)
	require.Equal(t, 1, fsevents.Subscriptions(dir), "b still follows the directory")
	require.NoError(t, os.Remove(filepath.Join(dir, CancelFile)))
	require.Equal(t, []string{CancelFile}, awaitNames(t, b), "b still gets its changes")
	v.leave(b)
	v.end() // waits for the subscription's end, begun when b left
	assert.Zero(t, fsevents.Subscriptions(dir), "the last consumer's leave ends the subscription")
}

// awaitNames waits for changes in k about its entries and returns their
// names.
func awaitNames(t *testing.T, k *fsevents.Sink) []string {
	t.Helper()
	var names []string
	awaitChanges(t, k, func(changes []fsevents.Change, _ bool) bool {
		for _, c := range changes {
			if c.Name != "" {
				names = append(names, c.Name)
			}
		}
		return len(names) > 0
	}, "a change reaches the consumer")
	return names
}

// awaitChanges takes what reaches k until done says it is what was awaited.
func awaitChanges(t *testing.T, k *fsevents.Sink, done func(changes []fsevents.Change, lost bool) bool, what string) {
	t.Helper()
	deadline := time.After(viewEventWait)
	for {
		select {
		case <-k.Ready():
			if done(k.Take(nil)) {
				return
			}
		case <-deadline:
			t.Fatal(what + ": not within the wait")
		}
	}
}

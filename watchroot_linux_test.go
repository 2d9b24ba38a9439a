package jobstore_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/strace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rootPollerRole follows $JOBSTORE_TRACE_ROOT with WatchRoot on the poll
// alone (every rootPollerInterval), marks Synced with an lstat of
// $JOBSTORE_TRACE_MARK + "synced", prints "synced", then prints each
// update's job ID and seq until a line on stdin, which it marks with
// mark + "stop" before it stops.
const (
	rootPollerRole     = "rootpoller"
	rootPollerInterval = 20 * time.Millisecond
)

func init() {
	roles[rootPollerRole] = func() int {
		root, mark := os.Getenv(traceRootEnv), os.Getenv(traceMarkEnv)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch, err := jobstore.WatchRoot(ctx, root, jobstore.WithoutEvents(), jobstore.WithPollInterval(rootPollerInterval))
		if err != nil {
			fmt.Fprintln(os.Stderr, "rootpoller:", err)
			return 1
		}
		for u := range ch {
			if u.Synced {
				break
			}
		}
		_, _ = os.Lstat(mark + "synced")
		fmt.Println("synced")
		stop := make(chan struct{})
		go func() {
			_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
			close(stop)
		}()
		for {
			select {
			case u := <-ch:
				if u.Status != nil {
					fmt.Println(u.Dir.ID(), u.Status.Seq)
				}
			case <-stop:
				_, _ = os.Lstat(mark + "stop")
				cancel()
				for range ch { // released before exiting: no call cut short in the trace
				}
				return 0
			}
		}
	}
}

// TestWatchRoot_PollStatsEachJobOnceAndReadsOnlyWhatChanged (strace): with
// the poll alone over 30 jobs, each poll opens the root once and makes at
// most one stat of each job directory, and after Synced the three jobs whose
// status was written are read (opened) again, twice at most (the change,
// then the racily-clean check), the others once at most (the read that
// makes the first listing's stamp clean, a tick after it).
func TestWatchRoot_PollStatsEachJobOnceAndReadsOnlyWhatChanged(t *testing.T) {
	straceBin := requireStrace(t)
	dir := tempDir(t)
	root, mark := filepath.Join(dir, "root"), filepath.Join(dir, "mark-")
	var dirs []jobstore.JobDir
	for i := range 30 {
		dirs = append(dirs, writeJob(t, root, specAt(fmt.Sprintf("job-%02d", i), i), statusIn(jobstore.Running, 1)))
	}
	logFile := filepath.Join(dir, "strace.log")
	cmd := childCommand(t, rootPollerRole, traceRootEnv+"="+root, traceMarkEnv+"="+mark)
	cmd.Args = append([]string{"strace", "-f", "-qq", "-e", "trace=openat,newfstatat,statx,close", "-o", logFile, "--"}, cmd.Args...)
	cmd.Path = straceBin
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	startChild(t, cmd)
	c := &child{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	require.Equal(t, "synced", c.line(t))

	changed := map[string]bool{}
	for _, d := range dirs[10:13] {
		require.NoError(t, jobstore.WriteStatus(d, *statusIn(jobstore.Running, 2), jobstore.NoSync()))
		changed[string(d)] = true
	}
	for seen := map[string]bool{}; len(seen) < len(changed); {
		id, seq, _ := strings.Cut(c.line(t), " ")
		if seq == "2" {
			seen[id] = true
		}
	}
	time.Sleep(40 * rootPollerInterval) // polls with nothing to read but the racily-clean re-reads
	_, err = stdin.Write([]byte("stop\n"))
	require.NoError(t, err)
	require.NoError(t, cmd.Wait())

	log, err := os.ReadFile(logFile)
	require.NoError(t, err)
	calls, err := strace.Parse(string(log))
	require.NoError(t, err)
	events, err := strace.Resolve(calls, dir)
	require.NoError(t, err)
	begin, end := -1, -1
	for i, e := range events {
		switch e.Path {
		case mark + "synced":
			begin = i
		case mark + "stop":
			end = i
		}
	}
	require.True(t, begin >= 0 && end > begin, "no markers in the trace")
	polls, stats, opens := 0, map[string]int{}, map[string]int{}
	for _, e := range events[begin+1 : end] {
		switch {
		case e.Name == "newfstatat" || e.Name == "statx":
			if filepath.Dir(e.Path) == root {
				stats[e.Path]++
			}
		case e.Name == "openat" && e.Path == root: // a poll opens the root once: its stamp, listing and stats
			polls++
		case e.Name == "openat" && filepath.Dir(filepath.Dir(e.Path)) == root:
			opens[filepath.Dir(e.Path)]++ // a record of a job
		}
	}
	t.Logf("%d polls; stats of job-00: %d; records opened: %v", polls, stats[string(dirs[0])], opens)
	require.Greater(t, polls, 10)
	for _, d := range dirs {
		// One stat per poll, and the one that settles it after Synced.
		assert.LessOrEqual(t, stats[string(d)], polls+1, "at most one stat of %s per poll", d.ID())
		assert.GreaterOrEqual(t, stats[string(d)], polls-1, "%s is polled", d.ID())
		if changed[string(d)] {
			// status.json and cancel.json, once for the change and once when
			// the tick of its time is surely over (racily clean).
			assert.Positive(t, opens[string(d)], "%s changed and is read", d.ID())
			assert.LessOrEqual(t, opens[string(d)], 4, "%s is read twice at most", d.ID())
		} else {
			assert.LessOrEqual(t, opens[string(d)], 1, "%s did not change and is read once at most", d.ID())
		}
	}
}

package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/prereq"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// The stress test's size. JOBSTORE_STRESS_DURATION (a Go duration) sets how
// long the churners run: stressDuration with JOBSTORE_LONG=1 (CI),
// stressShortDuration otherwise or under -short.
const (
	stressJobs          = 2000
	stressChurners      = 8
	stressDuration      = 10 * time.Second
	stressShortDuration = 2 * time.Second
	stressDurationEnv   = "JOBSTORE_STRESS_DURATION"
	churnerIDEnv        = "JOBSTORE_TEST_CHURNER"
	churnerUntilEnv     = "JOBSTORE_TEST_UNTIL"
)

func init() { roles["churner"] = churner }

// churner works on the root $JOBSTORE_TEST_DIR until the Unix time in
// nanoseconds $JOBSTORE_TEST_UNTIL: it submits jobs, runs its own queued
// jobs (start, three progress writes, finish or, if asked, cancelled),
// asks any job to cancel, and removes its finished jobs. Its own jobs are
// the first listing's whose number is its index modulo stressChurners,
// and those it submits (c<index>-<n>). It prints "removed ID" for each job
// it removes.
func churner() int {
	root := os.Getenv(dirEnv)
	me, _ := strconv.Atoi(os.Getenv(churnerIDEnv))
	untilNS, _ := strconv.ParseInt(os.Getenv(churnerUntilEnv), 10, 64)
	until := time.Unix(0, untilNS)
	rng := rand.New(rand.NewPCG(uint64(me), uint64(untilNS)))
	var queued, finished []jobstore.JobDir
	for i := me; i < stressJobs; i += stressChurners {
		queued = append(queued, jobstore.JobDir(filepath.Join(root, fmt.Sprintf("job-%04d", i))))
	}
	pick := func(list *[]jobstore.JobDir) jobstore.JobDir {
		i := rng.IntN(len(*list))
		d := (*list)[i]
		*list = append((*list)[:i], (*list)[i+1:]...)
		return d
	}
	fail := func(what string, err error) int {
		fmt.Fprintf(os.Stderr, "churner %d: %s: %v\n", me, what, err)
		return 1
	}
	for n := 0; time.Now().Before(until); n++ {
		switch p := rng.IntN(100); {
		case p < 25:
			dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: fmt.Sprintf("c%d-%d", me, n), Kind: "stress"})
			if err != nil {
				return fail("submit", err)
			}
			queued = append(queued, dir)
		case p < 60 && len(queued) > 0:
			dir := pick(&queued)
			r, err := jobstore.Start(dir, jobstore.WithProgressInterval(0))
			if errors.Is(err, jobstore.ErrCancelRequested) || errors.Is(err, jobstore.ErrWrongState) {
				finished = append(finished, dir) // cancelled while queued
				continue
			}
			if errors.Is(err, jobstore.ErrLocked) { // a RequestCancel holds it for a moment
				queued = append(queued, dir)
				continue
			}
			if err != nil {
				return fail("start "+dir.ID(), err)
			}
			outcome := jobstore.Outcome{State: jobstore.Succeeded}
			for i := range 3 {
				if r.Context().Err() != nil {
					outcome = jobstore.Outcome{State: jobstore.Cancelled}
					break
				}
				if err := r.Progress(float64(i+1)/3, "step"); err != nil {
					return fail("progress "+dir.ID(), err)
				}
			}
			if outcome.State == jobstore.Succeeded && rng.IntN(4) == 0 {
				outcome = jobstore.Outcome{State: jobstore.Failed, Error: "stress"}
			}
			if err := r.Finish(outcome); err != nil {
				return fail("finish "+dir.ID(), err)
			}
			if err := r.Close(); err != nil {
				return fail("close "+dir.ID(), err)
			}
			finished = append(finished, dir)
		case p < 75:
			dir := jobstore.JobDir(filepath.Join(root, fmt.Sprintf("job-%04d", rng.IntN(stressJobs))))
			err := jobstore.RequestCancel(dir, jobstore.CancelRequest{Reason: "stress"})
			if err != nil && !errors.Is(err, jobstore.ErrWrongState) && !errors.Is(err, jobstore.ErrNotJob) && !errors.Is(err, jobstore.ErrLocked) {
				return fail("cancel "+dir.ID(), err)
			}
		case len(finished) > 0:
			dir := pick(&finished)
			err := jobstore.Remove(dir)
			var je *jobstore.Error
			switch {
			case errors.Is(err, jobstore.ErrLocked): // a canceller's lock or claim, for a moment
				finished = append(finished, dir)
				continue
			case errors.Is(err, jobstore.ErrWrongState) && errors.As(err, &je) && je.Found != string(jobstore.Running):
				// Start said ErrCancelRequested while the canceller was
				// still writing cancelled: the job is queued a moment more.
				finished = append(finished, dir)
				continue
			}
			if err != nil {
				return fail("remove "+dir.ID(), err)
			}
			fmt.Println("removed", dir.ID())
		}
	}
	return 0
}

// stressConsumer follows a root with WatchRoot in its own goroutine and
// records its view and any broken promise.
type stressConsumer struct {
	name string
	mu   sync.Mutex
	view map[jobstore.JobDir]jobstore.RootUpdate
	seq  map[jobstore.JobDir]uint64
	seen map[jobstore.JobDir]bool // ever reported
	gone map[jobstore.JobDir]bool // reported Removed
	errs []string
	n    int
}

func (c *stressConsumer) follow(ch <-chan jobstore.RootUpdate) {
	synced := false
	for u := range ch {
		c.mu.Lock()
		c.n++
		switch {
		case u.Synced:
			synced = true
		case u.Dir == "":
			c.errs = append(c.errs, fmt.Sprintf("root error: %v", u.Err))
		case u.Removed:
			if _, ok := c.view[u.Dir]; !ok {
				c.errs = append(c.errs, "Removed of a job not in view: "+u.Dir.ID())
			}
			delete(c.view, u.Dir)
			delete(c.seq, u.Dir)
			c.gone[u.Dir] = true
		default:
			if _, again := c.view[u.Dir]; again && !synced {
				c.errs = append(c.errs, "two updates before Synced: "+u.Dir.ID())
			}
			if u.Status != nil {
				if u.Status.Seq < c.seq[u.Dir] {
					c.errs = append(c.errs, fmt.Sprintf("%s: seq %d after %d", u.Dir.ID(), u.Status.Seq, c.seq[u.Dir]))
				}
				c.seq[u.Dir] = u.Status.Seq
			}
			c.view[u.Dir] = u
			c.seen[u.Dir] = true
		}
		c.mu.Unlock()
	}
}

// diff compares the view with List's entries; "" when they agree.
func (c *stressConsumer) diff(want map[jobstore.JobDir]string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for dir, w := range want {
		u, ok := c.view[dir]
		if got := summary(u.Spec, u.Status, u.Err); !ok || got != w {
			out = append(out, fmt.Sprintf("%s: list %q, view %q (in view %v)", dir.ID(), w, got, ok))
		}
	}
	for dir := range c.view {
		if _, ok := want[dir]; !ok {
			out = append(out, dir.ID()+": in the view, not in List")
		}
	}
	if len(out) > 10 {
		out = append(out[:10], fmt.Sprintf("... %d in all", len(out)))
	}
	return strings.Join(out, "\n")
}

// TestWatchRoot_ThreeConsumersFollowAChurningRoot: three WatchRoot
// consumers (two on events, one on the poll alone) follow a root of 2,000
// jobs while 8 processes submit, start, progress, finish, cancel and
// remove jobs. Every consumer's last view equals List's, no job's seq ever
// went back in any consumer, and every removed job a consumer had seen was
// reported Removed to it.
//
//	JOBSTORE_STRESS_DURATION=30s go test -count=1 -v -run ThreeConsumersFollowAChurningRoot .
func TestWatchRoot_ThreeConsumersFollowAChurningRoot(t *testing.T) {
	if testdir.UnderWine() {
		t.Skip("Wine: 2,000 jobs and 8 processes are more than a smoke test of the Windows path needs")
	}
	duration := stressShortDuration
	if prereq.LongRun() && !testing.Short() {
		duration = stressDuration
	}
	if s := os.Getenv(stressDurationEnv); s != "" {
		d, err := time.ParseDuration(s)
		require.NoError(t, err, stressDurationEnv)
		duration = d
	}
	root := tempDir(t)
	for i := range stressJobs {
		writeJob(t, root, specAt(fmt.Sprintf("job-%04d", i), i), statusIn(jobstore.Queued, 1))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var consumers []*stressConsumer
	var wg sync.WaitGroup
	for _, mode := range []struct {
		name string
		opts []jobstore.WatchOption
	}{
		{"events-1", nil},
		{"events-2", nil},
		{"poll-only", []jobstore.WatchOption{jobstore.WithoutEvents(), jobstore.WithPollInterval(100 * time.Millisecond)}},
	} {
		ch, err := jobstore.WatchRoot(ctx, root, mode.opts...)
		require.NoError(t, err)
		c := &stressConsumer{name: mode.name, view: map[jobstore.JobDir]jobstore.RootUpdate{},
			seq: map[jobstore.JobDir]uint64{}, seen: map[jobstore.JobDir]bool{}, gone: map[jobstore.JobDir]bool{}}
		consumers = append(consumers, c)
		wg.Go(func() { c.follow(ch) })
	}

	until := time.Now().Add(duration)
	var churners []*child
	for i := range stressChurners {
		churners = append(churners, startRole(t, "churner", dirEnv+"="+root, churnerIDEnv+"="+strconv.Itoa(i),
			churnerUntilEnv+"="+strconv.FormatInt(until.UnixNano(), 10)))
	}
	removed := map[jobstore.JobDir]bool{}
	for _, c := range churners {
		require.NoError(t, c.stdin.Close())
		for {
			line, err := c.out.ReadString('\n')
			if err != nil {
				break
			}
			if id, ok := strings.CutPrefix(strings.TrimSpace(line), "removed "); ok {
				removed[jobstore.JobDir(filepath.Join(root, id))] = true
			}
		}
		require.NoError(t, c.cmd.Wait(), "a churner failed")
	}

	entries, err := jobstore.List(root)
	require.NoError(t, err)
	want := map[jobstore.JobDir]string{}
	for _, e := range entries {
		want[e.Dir] = summary(e.Spec, e.Status, e.Err)
	}
	end := time.Now().Add(time.Minute) // a hang guard: the consumers catch up within a poll or two
	for _, c := range consumers {
		for d := c.diff(want); d != ""; d = c.diff(want) {
			if time.Now().After(end) {
				t.Fatalf("%s's last view differs from List's:\n%s", c.name, d)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	cancel()
	wg.Wait()
	for _, c := range consumers {
		require.Empty(t, c.errs, "%s broke a promise", c.name)
		missed := 0
		for dir := range removed {
			if c.seen[dir] && !c.gone[dir] {
				missed++
			}
		}
		require.Zero(t, missed, "%s: removed jobs it had seen but was not told of", c.name)
		t.Logf("%s: %d updates; %d jobs at the end; %d removals, %d of them seen", c.name, c.n, len(want), len(removed), len(c.gone))
	}
}

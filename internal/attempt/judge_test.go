package attempt

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/axqua/jobstore/internal/fsys"
	"github.com/axqua/jobstore/internal/proc"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// judgeDeadline only guards against a judge that hangs (a FIFO opened
// without O_NONBLOCK would); it is not a speed limit.
const judgeDeadline = time.Minute

// judgeSoon is Judge, failing the test if it does not return.
func judgeSoon(t *testing.T, job *fsys.Dir, key string, n uint64, owner *Owner, host string, fallback time.Duration) (Verdict, string, error) {
	t.Helper()
	type result struct {
		v   Verdict
		why string
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, why, err := Judge(job, key, n, owner, host, fallback)
		done <- result{v, why, err}
	}()
	select {
	case r := <-done:
		return r.v, r.why, r.err
	case <-time.After(judgeDeadline):
		t.Fatal("Judge hangs")
		return 0, "", nil
	}
}

// Another host judges the owner by watching its lease with its own clock:
// alive while renewed, gone a lease after renewal stopped.
func TestJudge_OtherHostByLease(t *testing.T) {
	dir, job := newJob(t)
	const lease = 300 * time.Millisecond
	c, err := Take(job, 1)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	owner := &Owner{Host: "hostA", PID: os.Getpid(), Lease: lease}
	r := StartRenewer(c, lease, nil)
	alive := 0
	var lastChange time.Time // the last look that saw the lease change
	for deadline := time.Now().Add(judgeDeadline); alive < 3 && time.Now().Before(deadline); time.Sleep(lease / 10) {
		at := time.Now()
		v, why, err := judgeSoon(t, job, dir, 1, owner, "hostB", time.Minute)
		require.NoError(t, err)
		require.NotEqual(t, Gone, v, why)
		if v == Alive {
			alive++
			lastChange = at
		}
	}
	require.Equal(t, 3, alive, "a renewed lease must be seen renewed")
	r.Stop()
	stopped := time.Now()
	for {
		at := time.Now()
		v, why, err := judgeSoon(t, job, dir, 1, owner, "hostB", time.Minute)
		require.NoError(t, err)
		switch v {
		case Alive: // a renewal written just before Stop, seen now
			lastChange = at
		case Gone:
			require.GreaterOrEqual(t, time.Since(lastChange), lease, "judged gone before a whole lease of no change: %s", why)
			assert.Contains(t, why, lease.String(), "the owner's lease applies")
			return
		}
		require.Less(t, time.Since(stopped), judgeDeadline, "never judged gone")
		time.Sleep(lease / 10)
	}
}

// On the owner's own host the process table answers at once: this process
// is alive with its lease stopped; a pid that is gone is gone.
func TestJudge_SameHostByPid(t *testing.T) {
	switch runtime.GOOS {
	case "linux", "darwin", "windows":
	default:
		t.Skip("no process start token on " + runtime.GOOS + ": the lease alone decides there")
	}
	dir, job := newJob(t)
	c, err := Take(job, 1)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	self := &Owner{Host: "hostA", PID: os.Getpid(), PIDScope: proc.Scope(), PIDStart: proc.SelfStart(), Lease: time.Hour}
	v, why, err := judgeSoon(t, job, dir, 1, self, "hostA", time.Hour)
	require.NoError(t, err)
	assert.Equal(t, Alive, v, why)

	reused := *self
	reused.PIDStart = "another process's start"
	v, why, err = judgeSoon(t, job, dir, 1, &reused, "hostA", time.Hour)
	require.NoError(t, err)
	assert.Equal(t, Gone, v, why)

	v, why, err = judgeSoon(t, job, dir, 1, self, "hostB", time.Hour)
	require.NoError(t, err)
	assert.Equal(t, Undecided, v, "another host never judges by this host's pids: %s", why)
}

func TestJudge_OverAndNoClaim(t *testing.T) {
	dir, job := newJob(t)
	v, _, err := judgeSoon(t, job, dir, 1, nil, "h", time.Hour)
	require.NoError(t, err)
	assert.Equal(t, NoClaim, v)
	c, err := Take(job, 1)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	won, err := Fence(job, 1, "test")
	require.NoError(t, err)
	require.True(t, won)
	v, _, err = judgeSoon(t, job, dir, 1, nil, "h", time.Hour)
	require.NoError(t, err)
	assert.Equal(t, Over, v)
}

// Hostile leases: a judge never follows a link, never waits on a FIFO,
// never reads more than a counter's worth. A lease that is not a regular
// file is no proof of life: judged as a missing lease is, undecided at
// first, saying what is there, and gone once watched for a whole lease.
func TestJudge_HostileLeaseIsNeverFollowedAndProvesNoLife(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, lease string)
		ok    bool // a regular file: its content is just bytes
	}{
		{"a FIFO", func(t *testing.T, lease string) { mkfifo(t, lease) }, false},
		{"a link to /dev/zero", func(t *testing.T, lease string) { require.NoError(t, os.Symlink("/dev/zero", lease)) }, false},
		{"a link to a file outside", func(t *testing.T, lease string) {
			outside := filepath.Join(testdir.New(t), "f")
			require.NoError(t, os.WriteFile(outside, []byte("1\n"), 0o644))
			require.NoError(t, os.Symlink(outside, lease))
		}, false},
		{"a directory", func(t *testing.T, lease string) { require.NoError(t, os.Mkdir(lease, 0o755)) }, false},
		{"a 3 GiB sparse file", func(t *testing.T, lease string) {
			f, err := os.Create(lease)
			require.NoError(t, err)
			require.NoError(t, f.Truncate(3<<30))
			require.NoError(t, f.Close())
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if runtime.GOOS == "windows" {
				t.Skip("no FIFOs, devices or unprivileged links on Windows")
			}
			dir, job := newJob(t)
			c, err := Take(job, 1)
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })
			tc.plant(t, filepath.Join(dir, RunName(1), LeaseFile))
			before := heapInUse()
			v, why, err := judgeSoon(t, job, dir, 1, &Owner{Host: "hostA"}, "hostB", time.Hour)
			require.NoError(t, err)
			assert.Equal(t, Undecided, v, why)
			assert.Less(t, heapInUse()-before, int64(1<<20), "a judge reads a counter's worth, never the file")
			if tc.ok {
				return
			}
			assert.Contains(t, why, "its lease file is a", "it says what is there")
			assert.Contains(t, why, "no runner renews")
			v, why, err = judge(job, dir, 1, &Owner{Host: "hostA"}, "hostB", time.Hour, time.Now().Add(time.Hour))
			require.NoError(t, err)
			assert.Equal(t, Gone, v, "a whole lease later: %s", why)
			assert.Contains(t, why, "stayed so for a whole lease")
		})
	}
}

// A .run-N that is a link is never entered.
func TestJudge_RunDirectoryThatIsALinkIsRefused(t *testing.T) {
	skipLinksOnWindows(t)
	dir, job := newJob(t)
	outside := testdir.New(t)
	require.NoError(t, os.WriteFile(filepath.Join(outside, LeaseFile), []byte("1\n"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, RunName(1))))
	_, _, err := judgeSoon(t, job, dir, 1, nil, "h", time.Hour)
	var nr *fsys.NotRegularError
	require.ErrorAs(t, err, &nr)
}

func heapInUse() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// A lease renewed every lease/3 is never judged expired, whatever the
// judge's polling phase; one that stops is judged expired exactly once a
// whole lease has passed on the judge's clock since it last changed.
func TestMemory_RenewedNeverExpiresStoppedExpiresAfterOneLease(t *testing.T) {
	const lease = 900 * time.Millisecond
	for _, poll := range []time.Duration{7 * time.Millisecond, 100 * time.Millisecond, 299 * time.Millisecond, 450 * time.Millisecond} {
		t.Run("poll="+poll.String(), func(t *testing.T) {
			var mem memory
			mem.m = map[string]*observer{}
			base := time.Unix(1000, 0)
			value := func(at time.Duration) string { // the renewer writes at 0, L/3, 2L/3, ...
				return strconv.FormatInt(int64(at/(lease/RenewDivisor)), 10)
			}
			const renewFor = 10 * lease
			var at time.Duration
			for ; at < renewFor; at += poll {
				if got, _ := mem.look("k", value(at), lease, base.Add(at)); got == leaseExpired {
					t.Fatalf("a renewed lease was judged expired at %v", at)
				}
			}
			last := value(renewFor - 1)
			changedAt := renewFor - 1 - (renewFor-1)%(lease/RenewDivisor)
			for ; ; at += poll {
				got, _ := mem.look("k", last, lease, base.Add(at))
				if got == leaseExpired {
					require.GreaterOrEqual(t, at-changedAt, lease, "expired before a whole lease of no change")
					require.Less(t, at-changedAt, lease+poll+lease/RenewDivisor, "expired later than a lease and a poll after the last look at a change")
					return
				}
			}
		})
	}
}

// A process that judges 100,000 attempts over its life (a supervisor that
// runs for a day, judging a new attempt every second) keeps only the recent
// ones: its memory stays flat.
func TestMemory_StaysFlatOver100000Attempts(t *testing.T) {
	var mem memory
	mem.m = map[string]*observer{}
	const lease = 90 * time.Second
	base := time.Unix(1000, 0)
	window := forgetAfter(lease) + sweepEvery
	most := 0
	var heapAt10k int64
	for i := range 100_000 {
		now := base.Add(time.Duration(i) * time.Second)
		mem.look("job-"+strconv.Itoa(i)+"\x001", "1\n", lease, now)
		most = max(most, mem.len())
		if i == 10_000 {
			heapAt10k = heapInUse()
		}
	}
	require.LessOrEqual(t, most, int(window/time.Second)+1, "entries older than forgetAfter must be swept")
	assert.Less(t, heapInUse()-heapAt10k, int64(4<<20), "memory must not grow with the attempts judged")
}

// mkfifo makes a FIFO with the mkfifo command (every Unix has one).
func mkfifo(t *testing.T, path string) {
	t.Helper()
	out, err := exec.Command("mkfifo", path).CombinedOutput()
	require.NoError(t, err, "mkfifo: %s", out)
}

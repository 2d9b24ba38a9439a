package attempt

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/axqua/jobstore/internal/fsys"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// childEnv makes the test binary a claimer child (see claimer).
const childEnv = "ATTEMPT_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "claimer" {
		os.Exit(claimer())
	}
	os.Exit(m.Run())
}

// claimer reads commands ("take|DIR|N", "fence|DIR|N" or "resume|DIR|N",
// the last claiming N and resuming it at once) from stdin and answers each
// with "won", "lost" or "err ...", so that several processes race the same
// operation on the parent's word.
func claimer() int {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Split(in.Text(), "|")
		n, _ := strconv.ParseUint(f[2], 10, 64)
		won, err := race(f[0], f[1], n)
		switch {
		case err != nil:
			fmt.Println("err", strings.ReplaceAll(err.Error(), "\n", " "))
		case won:
			fmt.Println("won")
		default:
			fmt.Println("lost")
		}
	}
	return 0
}

// race does op on attempt n of the job directory at dir, once.
func race(op, dir string, n uint64) (bool, error) {
	job, err := fsys.Open(dir, true)
	if err != nil {
		return false, err
	}
	defer job.Close()
	switch op {
	case "take":
		c, err := Take(job, n)
		if errors.Is(err, ErrTaken) || errors.Is(err, ErrOver) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return true, c.Close()
	case "fence":
		return Fence(job, n, "test pid "+strconv.Itoa(os.Getpid()))
	}
	return false, fmt.Errorf("unknown op %q", op)
}

// child is a claimer process.
type child struct {
	stdin io.WriteCloser
	out   *bufio.Scanner
}

func startClaimer(t *testing.T) *child {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=claimer")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
	})
	return &child{stdin: in, out: bufio.NewScanner(out)}
}

func (c *child) answer(t *testing.T) string {
	t.Helper()
	require.True(t, c.out.Scan(), "the child answered nothing")
	return c.out.Text()
}

// raceOp runs op on attempt n of dir from goroutines in this process and
// from the children at once, and returns how many won.
func raceOp(t *testing.T, kids []*child, goroutines int, op, dir string, n uint64) int {
	t.Helper()
	var mu sync.Mutex
	won := 0
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			<-start
			ok, err := race(op, dir, n)
			if err != nil {
				t.Errorf("%s: %v", op, err)
			}
			if ok {
				mu.Lock()
				won++
				mu.Unlock()
			}
		})
	}
	for _, k := range kids {
		_, err := fmt.Fprintf(k.stdin, "%s|%s|%d\n", op, dir, n)
		require.NoError(t, err)
	}
	close(start)
	wg.Wait()
	for _, k := range kids {
		switch ans := k.answer(t); ans {
		case "won":
			won++
		case "lost":
		default:
			t.Fatalf("child: %s", ans)
		}
	}
	return won
}

// newJob makes a job directory and opens it as the attempt layer's callers
// do (never through a link).
func newJob(t *testing.T) (string, *fsys.Dir) {
	t.Helper()
	dir := filepath.Join(testdir.New(t), "job")
	require.NoError(t, os.Mkdir(dir, 0o755))
	job, err := fsys.Open(dir, true)
	require.NoError(t, err)
	t.Cleanup(func() { job.Close() })
	return dir, job
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      uint64
		fenced bool
		ok     bool
	}{
		{".run-1", 1, false, true},
		{".fenced-42", 42, true, true},
		{".run-0", 0, false, false},
		{".run-01", 0, false, false},
		{".run-", 0, false, false},
		{".run-1x", 0, false, false},
		{".run-99999999999999999999", 0, false, false},
		{".status.json123", 0, false, false},
		{"run-1", 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, fenced, ok := Parse(tc.name)
			assert.Equal(t, []any{tc.n, tc.fenced, tc.ok}, []any{n, fenced, ok})
			if ok {
				assert.Equal(t, tc.name, map[bool]string{false: RunName(n), true: FencedName(n)}[fenced], "the names round-trip")
			}
		})
	}
}

func TestTake_OneWinnerAmongGoroutinesAndProcesses(t *testing.T) {
	kids := []*child{startClaimer(t), startClaimer(t), startClaimer(t)}
	for i := range 30 {
		dir, _ := newJob(t)
		n := uint64(i%3 + 1)
		require.Equal(t, 1, raceOp(t, kids, 8, "take", dir, n), "round %d: exactly one claimant must win", i)
		assert.Equal(t, []string{RunName(n)}, names(t, dir))
	}
}

func TestFence_OneWinnerAmongGoroutinesAndProcesses(t *testing.T) {
	kids := []*child{startClaimer(t), startClaimer(t)}
	for i := range 30 {
		dir, job := newJob(t)
		c, err := Take(job, 1)
		require.NoError(t, err)
		require.NoError(t, c.Close())
		require.Equal(t, 1, raceOp(t, kids, 8, "fence", dir, 1), "round %d: exactly one fencer must win", i)
		assert.Equal(t, []string{FencedName(1)}, names(t, dir))
		assert.Equal(t, []string{FenceMarker}, names(t, filepath.Join(dir, FencedName(1))))
	}
}

func TestTake_OverAttemptIsNeverRevived(t *testing.T) {
	dir, job := newJob(t)
	c, err := Take(job, 1)
	require.NoError(t, err)
	_, err = Take(job, 1)
	require.ErrorIs(t, err, ErrTaken)
	won, err := Fence(job, 1, "test")
	require.NoError(t, err)
	require.True(t, won)
	// A claimant that read the status before the fence tries attempt 1 again.
	_, err = Take(job, 1)
	require.ErrorIs(t, err, ErrOver)
	assert.Equal(t, []string{FencedName(1)}, names(t, dir), "the stand-down must remove the revived claim")
	require.NoError(t, c.Close())
}

// A fencer that renamed the claim and died before marking it leaves the
// takeover to the next fencer; the owner's own rename (End) does too.
func TestFence_RenamedButUnmarkedIsTakenByTheNextFencer(t *testing.T) {
	dir, job := newJob(t)
	c, err := Take(job, 1)
	require.NoError(t, err)
	require.NoError(t, c.End())
	won, err := Fence(job, 1, "first")
	require.NoError(t, err)
	require.True(t, won)
	won, err = Fence(job, 1, "second")
	require.NoError(t, err)
	require.False(t, won)
	b, err := os.ReadFile(filepath.Join(dir, FencedName(1), FenceMarker))
	require.NoError(t, err)
	assert.Equal(t, "first\n", string(b))
}

// Only an attempt its owner ended says so; a fenced one, a claimed one, one
// never claimed, and one whose fence came before the owner's End do not. A
// link at .fenced-N is refused, never followed.
func TestEnded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		make  func(t *testing.T, job *fsys.Dir)
		ended bool
	}{
		{"ended by its owner", func(t *testing.T, job *fsys.Dir) {
			c, err := Take(job, 1)
			require.NoError(t, err)
			require.NoError(t, c.End())
		}, true},
		{"ended, then fenced by a reconciler", func(t *testing.T, job *fsys.Dir) {
			c, err := Take(job, 1)
			require.NoError(t, err)
			require.NoError(t, c.End())
			won, err := Fence(job, 1, "reconciler")
			require.NoError(t, err)
			require.True(t, won)
		}, true},
		{"fenced", func(t *testing.T, job *fsys.Dir) {
			c, err := Take(job, 1)
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })
			won, err := Fence(job, 1, "taker")
			require.NoError(t, err)
			require.True(t, won)
		}, false},
		{"fenced before its owner's End", func(t *testing.T, job *fsys.Dir) {
			c, err := Take(job, 1)
			require.NoError(t, err)
			won, err := Fence(job, 1, "taker")
			require.NoError(t, err)
			require.True(t, won)
			require.NoError(t, c.End())
		}, false},
		{"claimed", func(t *testing.T, job *fsys.Dir) {
			c, err := Take(job, 1)
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })
		}, false},
		{"never claimed", func(*testing.T, *fsys.Dir) {}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, job := newJob(t)
			tc.make(t, job)
			ended, err := Ended(job, 1)
			require.NoError(t, err)
			assert.Equal(t, tc.ended, ended)
		})
	}
	t.Run("link at .fenced-N", func(t *testing.T) {
		skipLinksOnWindows(t)
		dir, job := newJob(t)
		outside := testdir.New(t)
		require.NoError(t, os.WriteFile(filepath.Join(outside, EndMarker), nil, 0o644))
		require.NoError(t, os.Symlink(outside, filepath.Join(dir, FencedName(1))))
		ended, err := Ended(job, 1)
		var nr *fsys.NotRegularError
		require.ErrorAs(t, err, &nr)
		assert.False(t, ended)
	})
}

func TestFence_NeverClaimedIsNotWon(t *testing.T) {
	dir, job := newJob(t)
	won, err := Fence(job, 1, "test")
	require.NoError(t, err)
	require.False(t, won)
	assert.Empty(t, names(t, dir))
}

// A link planted at .fenced-N is never followed: the fence fails and the
// link's target gets no marker.
func TestFence_LinkAtTheFencedNameIsRefused(t *testing.T) {
	skipLinksOnWindows(t)
	dir, job := newJob(t)
	outside := testdir.New(t)
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, FencedName(1))))
	_, err := Fence(job, 1, "test")
	var nr *fsys.NotRegularError
	require.ErrorAs(t, err, &nr)
	assert.Empty(t, names(t, outside))
}

// After a fence, a write the owner began before it (its temp file made in
// .run-N) fails at the rename, the record stays, and Remove clears the temp
// file from .fenced-N.
func TestClaim_WriteAfterTheFenceFailsAndLeavesNothing(t *testing.T) {
	dir, job := newJob(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "status.json"), []byte("fencer's\n"), 0o644))
	c, err := Take(job, 1)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	f, tmp, err := c.CreateTemp("status.json", 0o644)
	require.NoError(t, err)
	_, err = f.Write([]byte("stale owner's\n"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	won, err := Fence(job, 1, "test")
	require.NoError(t, err)
	require.True(t, won)

	err = c.Replace(tmp, "status.json", true, 0)
	require.ErrorIs(t, err, fs.ErrNotExist)
	b, err := os.ReadFile(filepath.Join(dir, "status.json"))
	require.NoError(t, err)
	assert.Equal(t, "fencer's\n", string(b))
	require.NoError(t, c.Unlink(tmp))
	assert.Equal(t, []string{FenceMarker}, names(t, filepath.Join(dir, FencedName(1))), "the temp file must be gone from .fenced-1")
	fenced, err := c.Fenced()
	require.NoError(t, err)
	assert.True(t, fenced)
}

// A claim withdrawn removes what it made and its directory, and nothing
// else; one fenced meanwhile is left to its fencer.
func TestClaim_Withdraw(t *testing.T) {
	dir, job := newJob(t)
	c, err := Take(job, 1)
	require.NoError(t, err)
	f, _, err := c.CreateTemp("status.json", 0o644) // a stray temp file
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, c.Withdraw())
	assert.Empty(t, names(t, dir))

	c, err = Take(job, 1)
	require.NoError(t, err)
	won, err := Fence(job, 1, "test")
	require.NoError(t, err)
	require.True(t, won)
	require.NoError(t, c.Withdraw())
	assert.Equal(t, []string{FencedName(1)}, names(t, dir), "a fenced claim is not the claimant's to remove")
}

// Resume after a lapse either wins its own fence (and claims the next
// attempt) or finds the attempt taken over: never both, against any number
// of fencers in this process and in others.
func TestClaim_ResumeRacingFencersExactlyOneWins(t *testing.T) {
	kids := []*child{startClaimer(t), startClaimer(t)}
	resumed := 0
	for i := range 40 {
		dir, job := newJob(t)
		c, err := Take(job, 1)
		require.NoError(t, err)
		var next *Claim
		var rerr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			next, rerr = c.Resume("owner")
		}()
		others := raceOp(t, kids, 3, "fence", dir, 1)
		<-done
		switch {
		case rerr == nil:
			resumed++
			require.Equal(t, 0, others, "round %d: the owner resumed, so no fencer may win", i)
			assert.Equal(t, uint64(2), next.N())
			assert.ElementsMatch(t, []string{FencedName(1), RunName(2)}, names(t, dir))
			require.NoError(t, next.Close())
		case errors.Is(rerr, ErrFenced):
			require.Equal(t, 1, others, "round %d: the owner lost, so exactly one fencer won", i)
			assert.Equal(t, []string{FencedName(1)}, names(t, dir))
		default:
			t.Fatalf("round %d: %v", i, rerr)
		}
	}
	t.Logf("the owner resumed in %d of 40 rounds", resumed)
}

// The renewer makes its lease through .run-N as the job directory names it,
// only if that is the directory it claimed, and rewrites it in place: a
// .run-N swapped for another directory whose lease is a link to a file
// outside the job never has that file written, and the renewer reports the
// claim fenced.
func TestRenewer_NeverWritesThroughALinkAndLearnsOfTheSwap(t *testing.T) {
	skipLinksOnWindows(t)
	dir, job := newJob(t)
	victim := filepath.Join(testdir.New(t), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("precious\n"), 0o644))
	c, err := Take(job, 1)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	run := filepath.Join(dir, RunName(1))
	require.NoError(t, os.Rename(run, run+".aside"))
	require.NoError(t, os.Mkdir(run, 0o755))
	require.NoError(t, os.Symlink(victim, filepath.Join(run, LeaseFile)))

	events := make(chan error, 1)
	r := StartRenewer(c, 300*time.Millisecond, func(err error) { events <- err })
	t.Cleanup(r.Stop)
	select {
	case err := <-events:
		require.ErrorIs(t, err, ErrFenced)
	case <-time.After(time.Minute):
		t.Fatal("the renewer never noticed its directory was swapped")
	}
	b, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "precious\n", string(b), "the file behind the link must never be written")
	assert.NoFileExists(t, filepath.Join(run+".aside", LeaseFile),
		"the lease is made through .run-1 as named now, and only if it is the directory claimed: here, nowhere")
}

func TestRenewer_LearnsOfTheFence(t *testing.T) {
	_, job := newJob(t)
	c, err := Take(job, 1)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	events := make(chan error, 1)
	r := StartRenewer(c, 300*time.Millisecond, func(err error) { events <- err })
	t.Cleanup(r.Stop)
	require.NoError(t, r.Check(time.Now()))
	won, err := Fence(job, 1, "test")
	require.NoError(t, err)
	require.True(t, won)
	select {
	case err := <-events:
		require.ErrorIs(t, err, ErrFenced)
	case <-time.After(time.Minute):
		t.Fatal("the renewer never learned of the fence")
	}
	require.ErrorIs(t, r.Check(time.Now()), ErrFenced)
}

// The owner's own clock: its lease lapses 2/3 of a lease after the last
// renewal, and a lapsed lease is not renewed (a renewal would tell observers
// the owner is alive while a fence may be hidden from it).
func TestRenewer_LapsesByTheOwnersClockAndStopsRenewing(t *testing.T) {
	dir, job := newJob(t)
	c, err := Take(job, 1)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	const lease = time.Hour // no background renewal during the test
	r := StartRenewer(c, lease, nil)
	t.Cleanup(r.Stop)
	now := time.Now()
	require.NoError(t, r.Check(now.Add(lease/2)))
	require.ErrorIs(t, r.Check(now.Add(lease*2/3)), ErrLapsed)

	require.ErrorIs(t, r.renew(now.Add(lease)), ErrLapsed)
	assert.NoFileExists(t, filepath.Join(dir, RunName(1), LeaseFile), "a lapsed lease must not be renewed")
}

// skipLinksOnWindows: a symbolic link on Windows needs a privilege, and
// under Wine os.Symlink makes a Unix link that Windows calls follow
// unseen, so the refusal of reparse points can only be shown on NTFS.
func skipLinksOnWindows(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("links on Windows: needs a privilege, and Wine's are invisible to the reparse-point check")
	}
}

package jobstore_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// claimerRole reads commands ("claim|DIR|N" or "fence|DIR|N") from stdin
// and answers each with "won", "lost" or "err ...", so that several
// processes race the same claim or fence on the parent's word.
const claimerRole = "claimer"

func claimer() int {
	host, _ := jobstore.HostID()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		op, rest, _ := strings.Cut(in.Text(), "|")
		dir, nstr, _ := strings.Cut(rest, "|")
		n, _ := strconv.ParseUint(nstr, 10, 64)
		var won bool
		var err error
		switch op {
		case "claim":
			_, err = jobstore.ClaimAttempt(jobstore.JobDir(dir), n, time.Minute, host)
			won = err == nil
			if errors.Is(err, jobstore.ErrLocked) {
				err = nil
			}
		case "fence":
			won, err = jobstore.FenceAttempt(jobstore.JobDir(dir), n)
		}
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

// raceAttempt runs op ("claim" or "fence") on attempt n of dir from
// goroutines in this process and from the children at once, and returns
// how many won.
func raceAttempt(t *testing.T, kids []*child, goroutines int, op string, dir jobstore.JobDir, n uint64) int {
	t.Helper()
	return raceAttemptOn(t, kids, func(int) jobstore.JobDir { return dir }, goroutines, op, dir, n)
}

// raceAttemptOn is raceAttempt with child i working on kidDir(i), the same
// job seen through another mount.
func raceAttemptOn(t *testing.T, kids []*child, kidDir func(i int) jobstore.JobDir, goroutines int, op string, dir jobstore.JobDir, n uint64) int {
	t.Helper()
	var mu sync.Mutex
	won := 0
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			<-start
			var ok bool
			var err error
			if op == "claim" {
				_, err = jobstore.ClaimAttempt(dir, n, time.Minute, "test")
				ok = err == nil
				if errors.Is(err, jobstore.ErrLocked) {
					err = nil
				}
			} else {
				ok, err = jobstore.FenceAttempt(dir, n)
			}
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
	for i, k := range kids {
		_, err := fmt.Fprintf(k.stdin, "%s|%s|%d\n", op, kidDir(i), n)
		require.NoError(t, err)
	}
	close(start)
	wg.Wait()
	for _, k := range kids {
		switch ans := k.line(t); ans {
		case "won":
			won++
		case "lost":
		default:
			t.Fatalf("child: %s", ans)
		}
	}
	return won
}

func TestClaimAttempt_OneWinnerAmongGoroutinesAndProcesses(t *testing.T) {
	root := tempDir(t)
	kids := []*child{startRole(t, claimerRole), startRole(t, claimerRole), startRole(t, claimerRole)}
	for i := range 30 {
		dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: fmt.Sprintf("j%d", i), Kind: "k"})
		require.NoError(t, err)
		n := uint64(i%3 + 1)
		require.Equal(t, 1, raceAttempt(t, kids, 8, "claim", dir, n), "round %d: exactly one claimant must win", i)
		var owner map[string]any
		b, err := os.ReadFile(filepath.Join(jobstore.RunDirPath(dir, n), "owner.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &owner))
		require.EqualValues(t, n, owner["attempt"])
	}
}

func TestClaimAttempt_TakenAttemptNamesItsOwner(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	_, err = jobstore.ClaimAttempt(dir, 1, time.Minute, "hostA")
	require.NoError(t, err)
	_, err = jobstore.ClaimAttempt(dir, 1, time.Minute, "hostB")
	require.ErrorIs(t, err, jobstore.ErrLocked)
	require.Contains(t, err.Error(), `host "hostA"`)
	require.Contains(t, err.Error(), fmt.Sprintf("pid %d", os.Getpid()))
}

func TestClaimAttempt_FencedAttemptIsNeverRevived(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	_, err = jobstore.ClaimAttempt(dir, 1, time.Minute, "hostA")
	require.NoError(t, err)
	won, err := jobstore.FenceAttempt(dir, 1)
	require.NoError(t, err)
	require.True(t, won)
	// A claimant that read the status before the fence tries attempt 1 again.
	_, err = jobstore.ClaimAttempt(dir, 1, time.Minute, "hostB")
	require.ErrorIs(t, err, jobstore.ErrLocked)
	require.Contains(t, err.Error(), "is over")
	_, err = os.Lstat(jobstore.RunDirPath(dir, 1))
	require.ErrorIs(t, err, os.ErrNotExist, "the stand-down must remove the revived claim")
}

func TestClaimAttempt_NotAJob(t *testing.T) {
	_, err := jobstore.ClaimAttempt(jobstore.JobDir(filepath.Join(tempDir(t), "nope")), 1, time.Minute, "h")
	require.ErrorIs(t, err, jobstore.ErrNotJob)
}

// The attempt directories must never look like jobs, records or temp files.
func TestClaimAttempt_DirectoriesAreInvisibleToScansAndSweeps(t *testing.T) {
	root := tempDir(t)
	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	_, err = jobstore.ClaimAttempt(dir, 1, time.Minute, "h")
	require.NoError(t, err)
	_, err = jobstore.FenceAttempt(dir, 1)
	require.NoError(t, err)
	_, err = jobstore.ClaimAttempt(dir, 2, time.Minute, "h")
	require.NoError(t, err)
	for _, name := range []string{".run-2", ".fenced-1", ".run-12345", ".fenced-7"} {
		require.False(t, jobstore.IsTempName(name), name)
	}
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{jobstore.RunDirPath(dir, 2), jobstore.FencedDirPath(dir, 1)} {
		require.NoError(t, os.Chtimes(p, old, old))
	}
	swept, err := jobstore.SweepTemps(dir, 0)
	require.NoError(t, err)
	require.Empty(t, swept)
	entries, err := jobstore.List(root)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.NoError(t, entries[0].Err)
}

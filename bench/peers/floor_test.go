//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// newTestFloor is a floor in a temporary directory, its first round's root
// made, closed at the test's end.
func newTestFloor(t *testing.T) *floorSystem {
	t.Helper()
	sys, err := newFloor(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sys.close)
	s := sys.(*floorSystem)
	if err := s.reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFloor_LeavesTheLayoutAWorkerLeaves: the bare layout makes and drains
// jobs as jobstore lays them out (every drained job's records, lock file and
// claim directory in place, no .live entry left), and its latency sampler
// returns a sample per job.
func TestFloor_LeavesTheLayoutAWorkerLeaves(t *testing.T) {
	ctx := context.Background()
	s := newTestFloor(t)
	if err := s.enqueueOne(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.enqueueBatch(ctx, 4, 2); !ok || err != nil {
		t.Fatalf("enqueueBatch = %v, %v", ok, err)
	}
	if err := s.drain(ctx, 7, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.drain(ctx, 1, 1); err == nil {
		t.Error("a drain of an empty queue said it drained a job")
	}
	lat, err := s.latency(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(lat) != 2 {
		t.Errorf("latency returned %d samples, want 2", len(lat))
	}
	live, err := os.ReadDir(filepath.Join(s.root, ".live"))
	if err != nil || len(live) != 0 {
		t.Errorf(".live holds %d entries (%v), want none", len(live), err)
	}
	jobs, err := filepath.Glob(filepath.Join(s.root, "j-*"))
	if err != nil || len(jobs) != 9 {
		t.Fatalf("%d jobs in the root (%v), want 9", len(jobs), err)
	}
	for _, j := range jobs {
		for _, name := range []string{"job.json", "status.json", "job.lock", ".run-1"} {
			if _, err := os.Stat(filepath.Join(j, name)); err != nil {
				t.Errorf("%s: %v", j, err)
			}
		}
	}
}

// TestFloor_DrainOverlapsEndsAsAWorkerDoes: the drain keeps at most
// parallel jobs starting and at most parallel ends being written, and
// starts the next job while the last one's end is written, even at 1.
func TestFloor_DrainOverlapsEndsAsAWorkerDoes(t *testing.T) {
	for _, parallel := range []int{1, 3} {
		t.Run(fmt.Sprint("parallel ", parallel), func(t *testing.T) {
			ctx := context.Background()
			s := newTestFloor(t)
			const jobs = 8
			if ok, err := s.enqueueBatch(ctx, jobs, jobs); !ok || err != nil {
				t.Fatalf("enqueueBatch = %v, %v", ok, err)
			}
			var mu sync.Mutex
			var starting, ending, maxStarting, maxEnding, startsDuringAnEnd int
			enter := func(n, peak *int) {
				mu.Lock()
				defer mu.Unlock()
				*n++
				*peak = max(*peak, *n)
			}
			leave := func(n *int) {
				mu.Lock()
				defer mu.Unlock()
				*n--
			}
			start, finish := s.startJob, s.finishJob
			s.startJob = func(name string) (*os.File, error) {
				enter(&starting, &maxStarting)
				defer leave(&starting)
				mu.Lock()
				if ending > 0 {
					startsDuringAnEnd++
				}
				mu.Unlock()
				return start(name)
			}
			s.finishJob = func(name string, lock *os.File) error {
				enter(&ending, &maxEnding)
				defer leave(&ending)
				time.Sleep(20 * time.Millisecond) // an end slow enough for the next start to begin meanwhile
				return finish(name, lock)
			}
			if err := s.drain(ctx, jobs, parallel); err != nil {
				t.Fatal(err)
			}
			if maxStarting > parallel || maxEnding > parallel {
				t.Errorf("at most %d starting and %d ending at once, want at most %d each", maxStarting, maxEnding, parallel)
			}
			if startsDuringAnEnd == 0 {
				t.Errorf("no job started while another's end was written")
			}
		})
	}
}

// TestFloorWithWork_SpendsItsWorkInEachStart: floor+D is named for its
// work, spends it once in each drained job's start, and lays jobs out as
// floor does.
func TestFloorWithWork_SpendsItsWorkInEachStart(t *testing.T) {
	ctx := context.Background()
	const d, jobs = 20 * time.Millisecond, 5
	sys, err := newFloorWithWork(t.TempDir(), d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sys.close)
	s := sys.(*floorSystem)
	if got, want := s.name(), "floor+20ms"; got != want {
		t.Errorf("name() = %q, want %q", got, want)
	}
	if err := s.reset(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.enqueueBatch(ctx, jobs, jobs); !ok || err != nil {
		t.Fatalf("enqueueBatch = %v, %v", ok, err)
	}
	before, err := selfCPU()
	if err != nil {
		t.Skipf("this system's CPU time cannot be read: %v", err)
	}
	if err := s.drain(ctx, jobs, 1); err != nil {
		t.Fatal(err)
	}
	after, err := selfCPU()
	if err != nil {
		t.Fatal(err)
	}
	if used := (after - before) / jobs; used < d/3 {
		t.Errorf("a drained job used %v of CPU, want at least about its work, %v", used, d)
	}
	live, err := os.ReadDir(filepath.Join(s.root, ".live"))
	if err != nil || len(live) != 0 {
		t.Errorf(".live holds %d entries (%v), want none", len(live), err)
	}
}

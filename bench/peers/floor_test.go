//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestFloor_LeavesTheLayoutAWorkerLeaves: the bare layout makes and drains
// jobs as jobstore lays them out (every drained job's records, lock file and
// claim directory in place, no .live entry left), and its latency sampler
// returns a sample per job.
func TestFloor_LeavesTheLayoutAWorkerLeaves(t *testing.T) {
	ctx := context.Background()
	sys, err := newFloor(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sys.close)
	s := sys.(*floorSystem)
	if err := s.reset(ctx); err != nil {
		t.Fatal(err)
	}
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

package main

import (
	"context"
	"testing"
	"time"
)

// TestSampleLatency_EachSampleFindsTheWorkerSettled: every enqueue comes
// idleSettle or more after the last job was recorded done (or after the
// start), and each sample is measured from the enqueue call to the
// handler's start.
func TestSampleLatency_EachSampleFindsTheWorkerSettled(t *testing.T) {
	began := make(chan time.Time, 1)
	start := time.Now()
	last := start
	var gaps []time.Duration
	lat, err := sampleLatency(context.Background(), 3, began, func() error {
		gaps = append(gaps, time.Since(last))
		time.Sleep(2 * time.Millisecond) // the enqueue's own time counts
		began <- time.Now()
		return nil
	}, func() error {
		last = time.Now()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lat) != 3 || len(gaps) != 3 {
		t.Fatalf("%d samples, %d enqueues, want 3 each", len(lat), len(gaps))
	}
	for i := range 3 {
		if gaps[i] < idleSettle {
			t.Errorf("enqueue %d came %v after the last job was done, want at least %v", i, gaps[i], idleSettle)
		}
		if lat[i] < 2*time.Millisecond {
			t.Errorf("sample %d is %v, less than the enqueue took", i, lat[i])
		}
	}
}

package main

import (
	"context"
	"time"
)

// system is one job queue under measurement. Each method measures one
// thing and leaves the queue holding the jobs it says.
type system interface {
	name() string
	// reset empties the queue and its history; not measured.
	reset(ctx context.Context) error
	// enqueueOne enqueues n no-op jobs one call at a time.
	enqueueOne(ctx context.Context, n int) error
	// enqueueBatch enqueues n no-op jobs in calls of batch jobs; ok is
	// false when the system has no batch call (nothing is enqueued).
	enqueueBatch(ctx context.Context, n, batch int) (ok bool, err error)
	// drain starts a worker running parallel handlers at once and returns
	// once the n queued jobs are recorded as done, and the worker stopped.
	drain(ctx context.Context, n, parallel int) error
	// latency starts an idle worker and, samples times, enqueues one job and
	// measures from the enqueue call to its handler's start, waiting for the
	// job to be recorded done before the next.
	latency(ctx context.Context, samples int) ([]time.Duration, error)
	// serverCPU is the CPU time used so far by the system's server
	// processes (zero for none).
	serverCPU() (time.Duration, error)
	close()
}

// idleSettle is how long a latency sample waits before it enqueues (after
// the worker's start, or after the job before it was recorded done): long
// enough for the worker to finish what it does after a job is recorded
// (jobstore's Worker takes the job out of .live and unlocks it; river and
// asynq acknowledge) and wait idle, as each sample is meant to find it.
const idleSettle = 10 * time.Millisecond

// sampleLatency enqueues samples jobs one at a time with enqueue and
// measures from its call to the time the handler sent on began; before the
// next it calls done, which returns once the job is recorded done. Each
// sample begins idleSettle after the worker's start or after done returned.
func sampleLatency(ctx context.Context, samples int, began <-chan time.Time, enqueue, done func() error) ([]time.Duration, error) {
	lat := make([]time.Duration, 0, samples)
	for range samples {
		time.Sleep(idleSettle)
		t0 := time.Now()
		if err := enqueue(); err != nil {
			return nil, err
		}
		select {
		case t1 := <-began:
			lat = append(lat, t1.Sub(t0))
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if err := done(); err != nil {
			return nil, err
		}
	}
	return lat, nil
}

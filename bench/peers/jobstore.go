package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/axqua/jobstore"
)

// jobstoreSystem keeps its jobs in a root under a directory of its own,
// a fresh root for every round.
type jobstoreSystem struct {
	dir   string // made by newJobstore, removed by close
	round int
	root  string
}

func newJobstore(parent string) (*jobstoreSystem, error) {
	dir, err := os.MkdirTemp(parent, "jobstore-peers-")
	if err != nil {
		return nil, err
	}
	return &jobstoreSystem{dir: dir}, nil
}

func (s *jobstoreSystem) name() string { return "jobstore" }

func (s *jobstoreSystem) reset(context.Context) error {
	if s.root != "" {
		if err := os.RemoveAll(s.root); err != nil {
			return err
		}
	}
	s.round++
	s.root = filepath.Join(s.dir, fmt.Sprint("root-", s.round))
	return os.Mkdir(s.root, 0o755)
}

func noopSpec() jobstore.JobSpec { return jobstore.JobSpec{Kind: "noop"} }

func (s *jobstoreSystem) enqueueOne(_ context.Context, n int) error {
	for range n {
		if _, err := jobstore.Submit(s.root, noopSpec()); err != nil {
			return err
		}
	}
	return nil
}

func (s *jobstoreSystem) enqueueBatch(_ context.Context, n, batch int) (bool, error) {
	for done := 0; done < n; done += batch {
		specs := make([]jobstore.JobSpec, min(batch, n-done))
		for i := range specs {
			specs[i] = noopSpec()
		}
		if _, err := jobstore.SubmitMany(s.root, specs); err != nil {
			return true, err
		}
	}
	return true, nil
}

// drain runs a Worker until it finds nothing left (WithUntilIdle): each
// job has then been ended succeeded by a durable write.
func (s *jobstoreSystem) drain(ctx context.Context, n, parallel int) error {
	var ran atomic.Int64
	w, err := jobstore.NewWorker(s.root, func(context.Context, *jobstore.Run) error {
		ran.Add(1)
		return nil
	}, jobstore.WithParallel(parallel), jobstore.WithUntilIdle())
	if err != nil {
		return err
	}
	if err := w.Run(ctx); err != nil {
		return err
	}
	if got := ran.Load(); got != int64(n) {
		return fmt.Errorf("jobstore: %d handlers ran, want %d", got, n)
	}
	return nil
}

func (s *jobstoreSystem) latency(ctx context.Context, samples int) ([]time.Duration, error) {
	began := make(chan time.Time, 1)
	w, err := jobstore.NewWorker(s.root, func(context.Context, *jobstore.Run) error {
		began <- time.Now()
		return nil
	})
	if err != nil {
		return nil, err
	}
	// A Run that returns ends the sampling (its ctx), and says why.
	ctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx); stop() }()
	var dir jobstore.JobDir
	lat, err := sampleLatency(ctx, samples, began, func() (err error) {
		dir, err = jobstore.Submit(s.root, noopSpec())
		return err
	}, func() error {
		_, err := jobstore.Wait(ctx, dir)
		return err
	})
	stop()
	if runErr := <-ran; err != nil && runErr != nil {
		err = errors.Join(err, runErr)
	}
	return lat, err
}

func (s *jobstoreSystem) serverCPU() (time.Duration, error) { return 0, nil }

func (s *jobstoreSystem) close() { os.RemoveAll(s.dir) }

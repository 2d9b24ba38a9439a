package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

type noopArgs struct{}

func (noopArgs) Kind() string { return "noop" }

// noopWorker tells began, when it is set, when each job's work begins.
type noopWorker struct {
	river.WorkerDefaults[noopArgs]
	began chan<- time.Time
}

func (w *noopWorker) Work(context.Context, *river.Job[noopArgs]) error {
	if w.began != nil {
		w.began <- time.Now()
	}
	return nil
}

// riverSystem is river on PostgreSQL through pgx. Its clients fetch after
// riverFetchCooldown (river's default is 100 ms, which caps a worker
// running one job at a time near 10 jobs/s), and hear of new jobs through
// LISTEN/NOTIFY, with a look every poll (FetchPollInterval) besides.
type riverSystem struct {
	pool     *pgxpool.Pool
	inserter *river.Client[pgx.Tx]
	cooldown time.Duration
	poll     time.Duration
	serverPID
}

func newRiver(ctx context.Context, dsn, pidFile string, cooldown, poll time.Duration) (*riverSystem, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	var syncCommit string
	if err := pool.QueryRow(ctx, "SHOW synchronous_commit").Scan(&syncCommit); err != nil {
		pool.Close()
		return nil, err
	}
	if syncCommit != "on" {
		pool.Close()
		return nil, fmt.Errorf("synchronous_commit is %q, want on", syncCommit)
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: quietLogger()})
	if err != nil {
		pool.Close()
		return nil, err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		pool.Close()
		return nil, err
	}
	s := &riverSystem{pool: pool, cooldown: cooldown, poll: poll, serverPID: serverPID{pidFile: pidFile, tree: true}}
	// An insert-only client: no queues, so it works no job.
	s.inserter, err = river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: quietLogger()})
	if err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError}))
}

func (s *riverSystem) name() string { return "river" }

func (s *riverSystem) reset(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, "TRUNCATE river_job")
	return err
}

func (s *riverSystem) enqueueOne(ctx context.Context, n int) error {
	for range n {
		if _, err := s.inserter.Insert(ctx, noopArgs{}, nil); err != nil {
			return err
		}
	}
	return nil
}

func (s *riverSystem) enqueueBatch(ctx context.Context, n, batch int) (bool, error) {
	for done := 0; done < n; done += batch {
		params := make([]river.InsertManyParams, min(batch, n-done))
		for i := range params {
			params[i] = river.InsertManyParams{Args: noopArgs{}}
		}
		if _, err := s.inserter.InsertMany(ctx, params); err != nil {
			return true, err
		}
	}
	return true, nil
}

func (s *riverSystem) worker(parallel int, began chan<- time.Time) (*river.Client[pgx.Tx], error) {
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &noopWorker{began: began}); err != nil {
		return nil, err
	}
	return river.NewClient(riverpgxv5.New(s.pool), &river.Config{
		Logger:            quietLogger(),
		FetchCooldown:     s.cooldown,
		FetchPollInterval: s.poll,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: parallel}},
		Workers:           workers,
	})
}

// drain counts river's completion events, sent once a job's completed
// state is committed.
func (s *riverSystem) drain(ctx context.Context, n, parallel int) error {
	c, err := s.worker(parallel, nil)
	if err != nil {
		return err
	}
	events, cancel := c.Subscribe(river.EventKindJobCompleted)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		return err
	}
	defer c.Stop(context.WithoutCancel(ctx))
	for done := 0; done < n; {
		select {
		case <-events:
			done++
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return c.Stop(ctx)
}

func (s *riverSystem) latency(ctx context.Context, samples int) ([]time.Duration, error) {
	began := make(chan time.Time, 1)
	c, err := s.worker(1, began)
	if err != nil {
		return nil, err
	}
	events, cancel := c.Subscribe(river.EventKindJobCompleted)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	defer c.Stop(context.WithoutCancel(ctx))
	return sampleLatency(ctx, samples, began, func() error {
		_, err := s.inserter.Insert(ctx, noopArgs{}, nil)
		return err
	}, func() error {
		select {
		case <-events:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
}

func (s *riverSystem) close() { s.pool.Close() }

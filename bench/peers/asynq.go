package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// asynqQueue is the queue asynq puts tasks in when none is named.
const asynqQueue = "default"

// asynqSystem is asynq on Redis. Its servers look for tasks every
// checkInterval while the queues are empty (asynq's default is 1 s).
type asynqSystem struct {
	opt           asynq.RedisClientOpt
	rdb           *redis.Client
	client        *asynq.Client
	inspector     *asynq.Inspector
	checkInterval time.Duration
	serverPID
}

func newAsynq(ctx context.Context, addr, pidFile string, checkInterval time.Duration) (*asynqSystem, error) {
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, err
	}
	conf, err := rdb.ConfigGet(ctx, "appendfsync").Result()
	if err != nil {
		rdb.Close()
		return nil, err
	}
	if conf["appendfsync"] != "always" {
		rdb.Close()
		return nil, fmt.Errorf("appendfsync is %q, want always", conf["appendfsync"])
	}
	opt := asynq.RedisClientOpt{Addr: addr}
	return &asynqSystem{
		opt: opt, rdb: rdb,
		client:        asynq.NewClient(opt),
		inspector:     asynq.NewInspector(opt),
		checkInterval: checkInterval,
		serverPID:     serverPID{pidFile: pidFile},
	}, nil
}

func (s *asynqSystem) name() string { return "asynq" }

// reset empties Redis and makes a new client: a client registers a queue
// in Redis once, at its first task, and would not after the flush.
func (s *asynqSystem) reset(ctx context.Context) error {
	if err := s.rdb.FlushDB(ctx).Err(); err != nil {
		return err
	}
	s.client.Close()
	s.client = asynq.NewClient(s.opt)
	return nil
}

func (s *asynqSystem) enqueueOne(ctx context.Context, n int) error {
	for range n {
		if _, err := s.client.EnqueueContext(ctx, asynq.NewTask("noop", nil)); err != nil {
			return err
		}
	}
	return nil
}

// enqueueBatch: asynq has no call that enqueues several tasks.
func (s *asynqSystem) enqueueBatch(context.Context, int, int) (bool, error) { return false, nil }

func (s *asynqSystem) server(parallel int, handler func()) (*asynq.Server, error) {
	srv := asynq.NewServer(s.opt, asynq.Config{
		Concurrency:       parallel,
		TaskCheckInterval: s.checkInterval,
		LogLevel:          asynq.ErrorLevel,
	})
	mux := asynq.NewServeMux()
	mux.HandleFunc("noop", func(context.Context, *asynq.Task) error {
		handler()
		return nil
	})
	return srv, srv.Start(mux)
}

// waitEmpty returns once the queue holds no task: asynq deletes a task
// from Redis once its handler has returned nil.
func (s *asynqSystem) waitEmpty(ctx context.Context) error {
	for {
		info, err := s.inspector.GetQueueInfo(asynqQueue)
		if err != nil {
			return err
		}
		if info.Size == 0 {
			return nil
		}
		select {
		case <-time.After(asynqEmptyPoll):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// asynqEmptyPoll is how often waitEmpty asks Redis for the queue's size.
const asynqEmptyPoll = time.Millisecond

func (s *asynqSystem) drain(ctx context.Context, n, parallel int) error {
	var ran atomic.Int64
	all := make(chan struct{})
	srv, err := s.server(parallel, func() {
		if ran.Add(1) == int64(n) {
			close(all)
		}
	})
	if err != nil {
		return err
	}
	defer srv.Shutdown()
	select {
	case <-all:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.waitEmpty(ctx)
}

func (s *asynqSystem) latency(ctx context.Context, samples int) ([]time.Duration, error) {
	began := make(chan time.Time, 1)
	srv, err := s.server(1, func() { began <- time.Now() })
	if err != nil {
		return nil, err
	}
	defer srv.Shutdown()
	return sampleLatency(ctx, samples, began, func() error {
		_, err := s.client.EnqueueContext(ctx, asynq.NewTask("noop", nil))
		return err
	}, func() error { return s.waitEmpty(ctx) })
}

func (s *asynqSystem) close() {
	s.client.Close()
	s.inspector.Close()
	s.rdb.Close()
}

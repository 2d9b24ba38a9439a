//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// floorSystem is jobstore's layout made bare: on the same disk, the
// creates, writes, fsyncs, renames and removals that jobstore's Submit and
// a Worker's Start and Finish make for a job, and nothing else: no read, no
// check, no look for the next job (the drain takes names from a list in
// memory), no encoding. What it reaches is what the disk allows any code
// that keeps jobstore's records as they are (a directory per job, its
// status.json replaced whole and durably at each step); a mark beyond it is
// out of reach of that layout on this disk.
//
// Its steps, as jobstore's (docs/mechanisms.md):
//   - enqueue one: mkdir a build directory in .submit; create job.lock; for
//     job.json and status.json at once, a temp file written, fsynced and
//     renamed to its name; fsync the build directory; rename it into the root; mkdir
//     the job's .live entry; fsync .submit and the root;
//   - enqueue in batches: the same, with no fsync at all (an upper bound for
//     any batch, whatever it shares);
//   - a drained job: open job.lock, lock it, write the holder's line; mkdir
//     .run-1; twice (running, then succeeded) a temp file in .run-1 written,
//     fsynced and renamed over status.json, then the job directory fsynced;
//     remove the .live entry; empty job.lock and unlock it. The jobs overlap
//     as a Worker's do: at most parallel jobs starting at once, each giving
//     its place to the next job before it writes its end, and at most
//     parallel ends written at once;
//   - latency: a submitter makes one job as "enqueue one" does and hands its
//     name to a waiting worker the moment it is renamed into the root (the
//     fastest a watch could tell); the worker starts the job as the drain
//     does, and its handler begins once running is durable.
type floorSystem struct {
	dir   string // made by newFloor, removed by close
	round int
	root  string
	seq   int

	mu     sync.Mutex
	queued []string // jobs made and not yet drained, oldest first

	// work, if set, is CPU work each drained job's start spends before
	// its first call (floor+D: the layout with D of code per job).
	work *cpuWork

	// startJob and finishJob are start and finish; a test may wrap them.
	startJob  func(name string) (*os.File, error)
	finishJob func(name string, lock *os.File) error
}

func newFloor(parent string) (system, error) { return newFloorWithWork(parent, 0) }

// newFloorWithWork is floor whose drained jobs each spend work of one CPU
// in their start, before its first call, where a Worker's own code for a
// job (its look, reads and checks) runs; zero is none. At 1 at a time the
// start is what the next job waits for, so that work adds to each job's
// time as much as any code of a Worker could.
func newFloorWithWork(parent string, work time.Duration) (system, error) {
	s := &floorSystem{}
	if work > 0 {
		w, err := newCPUWork(work)
		if err != nil {
			return nil, err
		}
		s.work = w
	}
	dir, err := os.MkdirTemp(parent, "floor-peers-")
	if err != nil {
		return nil, err
	}
	s.dir = dir
	s.startJob, s.finishJob = s.start, s.finish
	return s, nil
}

// name is "floor", or "floor+D" with D of work per job.
func (s *floorSystem) name() string {
	if s.work != nil {
		return floorWithWork + s.work.d.String()
	}
	return "floor"
}

func (s *floorSystem) reset(context.Context) error {
	if s.root != "" {
		if err := os.RemoveAll(s.root); err != nil {
			return err
		}
	}
	s.round++
	s.root = filepath.Join(s.dir, fmt.Sprint("root-", s.round))
	s.queued = nil
	for _, d := range []string{s.root, filepath.Join(s.root, ".submit"), filepath.Join(s.root, ".live")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}

func (s *floorSystem) nextName() string {
	s.seq++
	return fmt.Sprintf("j-%08d", s.seq)
}

func (s *floorSystem) enqueueOne(_ context.Context, n int) error {
	for range n {
		name := s.nextName()
		if err := s.submit(name, true, nil); err != nil {
			return err
		}
		s.queue(name)
	}
	return nil
}

func (s *floorSystem) enqueueBatch(_ context.Context, n, _ int) (bool, error) {
	for range n {
		name := s.nextName()
		if err := s.submit(name, false, nil); err != nil {
			return true, err
		}
		s.queue(name)
	}
	return true, nil
}

func (s *floorSystem) queue(name string) {
	s.mu.Lock()
	s.queued = append(s.queued, name)
	s.mu.Unlock()
}

func (s *floorSystem) take() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queued) == 0 {
		return "", false
	}
	name := s.queued[0]
	s.queued = s.queued[1:]
	return name, true
}

// submit makes job name as Submit does (durable) or as a batch's upper
// bound does (no fsync); published, if set, is called once the job is
// renamed into the root, before the fsyncs that follow.
func (s *floorSystem) submit(name string, durable bool, published func()) error {
	submitDir := filepath.Join(s.root, ".submit")
	build := filepath.Join(submitDir, ".build-"+name)
	if err := os.Mkdir(build, 0o755); err != nil {
		return err
	}
	if err := createEmpty(filepath.Join(build, "job.lock")); err != nil {
		return err
	}
	// The two records at once, as jobstore writes them: their fsyncs overlap.
	var errs [2]error
	var wg sync.WaitGroup
	for i, rec := range []string{"job.json", "status.json"} {
		wg.Go(func() { errs[i] = writeRecord(build, build, rec, durable) })
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return err
	}
	if durable {
		if err := syncDir(build); err != nil {
			return err
		}
	}
	if err := os.Rename(build, filepath.Join(s.root, name)); err != nil {
		return err
	}
	if published != nil {
		published()
	}
	if err := os.Mkdir(filepath.Join(s.root, ".live", name), 0o755); err != nil {
		return err
	}
	if !durable {
		return nil
	}
	if err := syncDir(submitDir); err != nil {
		return err
	}
	return syncDir(s.root)
}

// start is a Worker's Start of job name made bare (after s.work, if any):
// it returns the lock file, held, for finish.
func (s *floorSystem) start(name string) (*os.File, error) {
	if s.work != nil {
		s.work.spend()
	}
	dir := filepath.Join(s.root, name)
	lock, err := os.OpenFile(filepath.Join(dir, "job.lock"), os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		return nil, err
	}
	if _, err := lock.WriteAt(holderLine, 0); err != nil {
		lock.Close()
		return nil, err
	}
	if err := os.Mkdir(filepath.Join(dir, ".run-1"), 0o777); err != nil {
		lock.Close()
		return nil, err
	}
	if err := writeStatus(dir); err != nil {
		lock.Close()
		return nil, err
	}
	return lock, nil
}

// finish is a Worker's Finish of a job start returned lock for.
func (s *floorSystem) finish(name string, lock *os.File) error {
	defer lock.Close()
	dir := filepath.Join(s.root, name)
	if err := writeStatus(dir); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(s.root, ".live", name)); err != nil {
		return err
	}
	if err := lock.Truncate(0); err != nil {
		return err
	}
	return unix.Flock(int(lock.Fd()), unix.LOCK_UN)
}

// drain runs the queued jobs as a Worker at WithParallel(parallel) does on
// the disk: one goroutine takes the names in turn; each job is started and
// its end written on a goroutine of its own, which gives its slot back
// before it writes the end (so the next job starts while the last one's
// end is written) once fewer than parallel ends are being written.
func (s *floorSystem) drain(_ context.Context, n, parallel int) error {
	slots := make(chan struct{}, parallel) // jobs being started (a Worker's handlers)
	ends := make(chan struct{}, parallel)  // ends being written
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	total := 0
	for {
		slots <- struct{}{}
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		name, ok := s.take()
		if !ok || failed {
			break
		}
		wg.Go(func() {
			lock, err := s.startJob(name)
			ends <- struct{}{}
			<-slots
			if err == nil {
				err = s.finishJob(name, lock)
			}
			<-ends
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			if err == nil {
				total++
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if total != n {
		return fmt.Errorf("floor: %d jobs drained, want %d", total, n)
	}
	return nil
}

func (s *floorSystem) latency(ctx context.Context, samples int) ([]time.Duration, error) {
	names := make(chan string, 1)
	began := make(chan time.Time, 1)
	finished := make(chan error, 1)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { // the idle worker
		for {
			var name string
			select {
			case name = <-names:
			case <-ctx.Done():
				return
			}
			lock, err := s.start(name)
			if err != nil {
				finished <- err
				continue
			}
			began <- time.Now()
			finished <- s.finish(name, lock)
		}
	}()
	return sampleLatency(ctx, samples, began, func() error {
		name := s.nextName()
		return s.submit(name, true, func() { names <- name })
	}, func() error {
		select {
		case err := <-finished:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	})
}

func (s *floorSystem) serverCPU() (time.Duration, error) { return 0, nil }

func (s *floorSystem) close() { os.RemoveAll(s.dir) }

// holderLine is the size of the line a lock holder writes in job.lock.
var holderLine = make([]byte, 190)

// recordData is the size of a no-op job's record.
var recordData = make([]byte, 300)

func createEmpty(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// writeRecord writes a temp file in tempDir, fsyncs it if durable, and
// renames it to name in dir.
func writeRecord(tempDir, dir, name string, durable bool) error {
	f, err := os.CreateTemp(tempDir, "."+name)
	if err != nil {
		return err
	}
	if _, err := f.Write(recordData); err != nil {
		f.Close()
		return err
	}
	if durable {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), filepath.Join(dir, name))
}

// writeStatus replaces dir's status.json durably, from a temp file in
// .run-1, and fsyncs dir.
func writeStatus(dir string) error {
	if err := writeRecord(filepath.Join(dir, ".run-1"), dir, "status.json", true); err != nil {
		return err
	}
	return syncDir(dir)
}

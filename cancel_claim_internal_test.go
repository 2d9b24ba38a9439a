package jobstore

import (
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/axqua/jobstore/internal/testdir"
)

// startWith is Start, its steps composed as start composes them, with
// between(stage) called after "read" (the job read, before the claim) and
// after "claimed" (attempt claimed, before the cancel check): the two
// instants at which a canceller on another host can come.
func startWith(t *testing.T, dir JobDir, between func(stage string)) (*Run, error) {
	t.Helper()
	const op = "start"
	o, err := newStartOptions(op, dir, nil)
	if err != nil {
		return nil, err
	}
	jd, err := openJobDir(op, dir)
	if err != nil {
		return nil, err
	}
	lk, err := lockJobIn(op, jd)
	if err != nil {
		jd.Close()
		return nil, err
	}
	r, err := func() (*Run, error) {
		spec, last, err := readForStart(op, jd, nil)
		if err != nil {
			return nil, err
		}
		between("read")
		c, last, _, err := (&claimant{op, jd, lk, o.claimOptions}).forStart(last)
		if err != nil {
			return nil, lostRaceError(op, jd, err)
		}
		between("claimed")
		return begin(op, jd, lk, spec, c, last, o)
	}()
	if err != nil {
		_ = lk.Unlock()
		jd.Close()
	}
	return r, err
}

// cancelFromOtherHost plays a canceller on a host whose job.lock does not
// reach this one: RequestCancel publishes cancel.json (its own attempt at
// the queued job is stopped by job.lock when a Start here holds it), then
// cancelClaimed does the work a canceller there does under its own lock.
func cancelFromOtherHost(t *testing.T, dir JobDir) bool {
	t.Helper()
	if err := RequestCancel(dir, CancelRequest{RequestedBy: "other host", Reason: "race"}); err != nil {
		t.Errorf("RequestCancel: %v", err)
		return false
	}
	p := findCancel(dir)
	if p == nil {
		t.Errorf("no cancel request after RequestCancel")
		return false
	}
	changed, err := cancelClaimed(dir, &Lock{dir: dir}, p) // the other host's lock: not this one's
	if err != nil {
		t.Errorf("cancelClaimed: %v", err)
	}
	return changed
}

func submitQueued(t *testing.T) JobDir {
	t.Helper()
	dir, err := Submit(testdir.New(t), JobSpec{Kind: "k"})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func mustStatus(t *testing.T, dir JobDir) JobStatus {
	t.Helper()
	st, err := ReadStatus(dir)
	if err != nil || st == nil {
		t.Fatalf("ReadStatus: %v, %v", st, err)
	}
	return *st
}

// assertAttemptOver checks that attempt n can never be claimed again.
func assertAttemptOver(t *testing.T, dir JobDir, n uint64) {
	t.Helper()
	if _, err := os.Lstat(runPath(dir, n)); err == nil {
		t.Errorf("%s still exists", runPath(dir, n))
	}
	if _, err := os.Lstat(fencedPath(dir, n)); err != nil {
		t.Errorf("attempt %d not ended: %v", n, err)
	}
}

// A canceller on another host that runs after Start claimed attempt 1 loses
// the claim and writes nothing; Start then finds the request and refuses.
func TestStart_CancellerInClaimWindowLosesAndStartRefuses(t *testing.T) {
	dir := submitQueued(t)
	var changed bool
	r, err := startWith(t, dir, func(stage string) {
		if stage == "claimed" {
			changed = cancelFromOtherHost(t, dir)
			if st := mustStatus(t, dir); st.State != Queued {
				t.Errorf("the canceller wrote %s while Start held attempt 1", st.State)
			}
		}
	})
	if err == nil {
		r.Close()
		t.Fatalf("Start went on with a cancel request published in its claim window")
	}
	if !errors.Is(err, ErrCancelRequested) {
		t.Fatalf("Start: %v, want ErrCancelRequested", err)
	}
	if changed {
		t.Errorf("the canceller reports writing cancelled although Start held attempt 1")
	}
	st := mustStatus(t, dir)
	if st.State != Cancelled || st.Seq != 2 || st.Attempt != 1 {
		t.Fatalf("status %s seq %d attempt %d, want cancelled seq 2 attempt 1", st.State, st.Seq, st.Attempt)
	}
	assertAttemptOver(t, dir, 1)
}

// A canceller on another host that runs after Start read queued but before
// its claim wins attempt 1 and writes cancelled; Start's claim fails, it
// refuses with ErrCancelRequested, and the cancelled record stays as the
// canceller wrote it.
func TestStart_CancellerBeforeClaimWinsAndRecordStays(t *testing.T) {
	dir := submitQueued(t)
	var changed bool
	var written JobStatus
	r, err := startWith(t, dir, func(stage string) {
		if stage == "read" {
			changed = cancelFromOtherHost(t, dir)
			written = mustStatus(t, dir)
		}
	})
	if err == nil {
		r.Close()
		t.Fatalf("Start went on after the canceller won attempt 1")
	}
	if !errors.Is(err, ErrCancelRequested) {
		t.Fatalf("Start: %v, want ErrCancelRequested", err)
	}
	if !changed || written.State != Cancelled {
		t.Fatalf("the canceller did not write cancelled (changed %v, state %s)", changed, written.State)
	}
	st := mustStatus(t, dir)
	if st.Seq != written.Seq || st.State != Cancelled || !st.UpdatedAt.Equal(written.UpdatedAt) || st.Message != written.Message {
		t.Fatalf("the canceller's record was replaced: %+v, was %+v", st, written)
	}
	assertAttemptOver(t, dir, 1)
}

// Start and a canceller race on one queued job, round after round, both on
// this host (job.lock and the claim) and as from another host (the claim
// alone): exactly one goes on, and no reader ever sees a record that is not
// terminal after a terminal one, or seq going back.
func TestStart_RacesCancelExactlyOneOutcome(t *testing.T) {
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	for _, tc := range []struct {
		name      string
		otherHost bool
	}{{"same host", false}, {"other host", true}} {
		t.Run(tc.name, func(t *testing.T) {
			outcomes := map[string]int{}
			for range rounds {
				outcomes[raceStartCancel(t, tc.otherHost)]++
				if t.Failed() {
					return
				}
			}
			t.Logf("outcomes over %d rounds: %v", rounds, outcomes)
		})
	}
}

func raceStartCancel(t *testing.T, otherHost bool) string {
	t.Helper()
	dir := submitQueued(t)
	stop := make(chan struct{})
	var seen []JobStatus
	var pollWG sync.WaitGroup
	pollWG.Add(1)
	go func() {
		defer pollWG.Done()
		for {
			if st, err := ReadStatus(dir); err == nil && st != nil {
				seen = append(seen, *st)
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	var (
		wg       sync.WaitGroup
		run      *Run
		startErr error
		changed  bool
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			run, startErr = Start(dir, WithProgressInterval(0))
			if !errors.Is(startErr, ErrLocked) {
				return // ErrLocked: the canceller holds job.lock for a moment
			}
		}
	}()
	go func() {
		defer wg.Done()
		if otherHost {
			changed = cancelFromOtherHost(t, dir)
			return
		}
		if err := RequestCancel(dir, CancelRequest{Reason: "race"}); err != nil {
			t.Errorf("RequestCancel: %v", err)
		}
	}()
	wg.Wait()
	final := mustStatus(t, dir)
	outcome := ""
	switch {
	case startErr == nil:
		outcome = "started"
		if changed || final.State != Running || final.Seq != 2 || final.Attempt != 1 {
			t.Errorf("Start went on, but canceller changed %v and the status is %s seq %d attempt %d", changed, final.State, final.Seq, final.Attempt)
		}
		<-run.Context().Done() // the runner hears the request
		if err := run.Finish(Outcome{State: Cancelled}); err != nil {
			t.Errorf("Finish: %v", err)
		}
		if err := run.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	case errors.Is(startErr, ErrCancelRequested):
		outcome = "cancelled"
		if final.State != Cancelled || final.Seq != 2 {
			t.Errorf("Start refused, but the status is %s seq %d (one cancelled write expected, seq 2)", final.State, final.Seq)
		}
	default:
		t.Errorf("Start: %v", startErr)
	}
	close(stop)
	pollWG.Wait()
	seen = append(seen, mustStatus(t, dir))
	for i := 1; i < len(seen); i++ {
		prev, cur := seen[i-1], seen[i]
		if cur.Seq < prev.Seq {
			t.Errorf("seq went back: %d then %d", prev.Seq, cur.Seq)
		}
		if prev.State.Terminal() && (cur.State != prev.State || cur.Seq != prev.Seq || !cur.UpdatedAt.Equal(prev.UpdatedAt)) {
			t.Errorf("terminal record seq %d %s replaced by seq %d %s", prev.Seq, prev.State, cur.Seq, cur.State)
		}
	}
	return outcome
}

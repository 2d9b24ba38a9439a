package attempt

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"sync"
	"time"

	"github.com/axqua/jobstore/internal/fsys"
	"github.com/axqua/jobstore/internal/proc"
)

// Judge decides whether attempt n's owner is alive, as seen from this
// process, looking once (it never waits): key names the job for this
// process's memory of the leases it watched (the job directory's path).
//
// On the owner's own host (the same host identity, and owner.PIDScope this
// process's pid scope) the process table answers at once: its pid alive with
// the recorded start token is alive, anything else is gone. Elsewhere, or
// when the pid proves nothing, the lease is judged by this process's
// monotonic clock: alive once it changes, gone once this process has seen
// it unchanged for a whole lease (its looks of earlier calls count, see
// memory), else undecided. No timestamp written by another host is ever
// compared with this host's clock, so clock skew between hosts has no
// effect. The lease is the owner's, or fallback when owner is nil or does
// not say.
//
// An attempt with .fenced-n is over, whatever else is there: a .run-n
// beside it is what a Take that found the attempt over left when it crashed
// before removing its directory again, and it claims nothing.
//
// Every look is relative to job's descriptor: .run-n is opened without
// following a link (one there is a *fsys.NotRegularError), and the lease
// is read without following one, without blocking, at most 64 bytes. A
// lease that is a link, a FIFO, a device or a directory is never followed
// nor waited on, and proves no life: it is judged as a missing lease is,
// gone once watched for a whole lease.
func Judge(job *fsys.Dir, key string, n uint64, owner *Owner, host string, fallback time.Duration) (Verdict, string, error) {
	return judge(job, key, n, owner, host, fallback, time.Now())
}

func judge(job *fsys.Dir, key string, n uint64, owner *Owner, host string, fallback time.Duration, now time.Time) (Verdict, string, error) {
	k := key + "\x00" + strconv.FormatUint(n, 10)
	fi, err := job.Lstat(RunName(n))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		watched.forget(k)
		if _, ferr := job.Lstat(FencedName(n)); ferr == nil {
			return Over, "the attempt is over", nil
		}
		return NoClaim, "no claim for the attempt", nil
	case err != nil:
		return 0, "", err
	case !fi.IsDir():
		return 0, "", &fsys.NotRegularError{Mode: fi.Mode()}
	}
	if _, ferr := job.Lstat(FencedName(n)); ferr == nil {
		// Over for good. A .run-n beside .fenced-n is no claim: it is the
		// mkdir of a Take that found the attempt over and was stopped (a
		// crash) before it removed its directory again.
		watched.forget(k)
		return Over, "the attempt is over", nil
	}
	lease := fallback
	if owner != nil {
		if owner.Lease > 0 {
			lease = owner.Lease
		}
		if owner.Host != "" && owner.Host == host {
			switch proc.Judge(owner.PIDScope, owner.PID, owner.PIDStart) {
			case proc.Alive:
				return Alive, fmt.Sprintf("this host's process table shows pid %d running, the process that wrote the record", owner.PID), nil
			case proc.Dead:
				watched.forget(k)
				return Gone, fmt.Sprintf("this host's process table shows pid %d gone", owner.PID), nil
			}
		}
	}
	content, err := readLease(job, n)
	if errors.Is(err, fs.ErrNotExist) {
		watched.forget(k)
		return Over, "the attempt ended while it was watched", nil
	}
	irregular := ""
	var nr *fsys.NotRegularError
	if errors.As(err, &nr) {
		// No proof of life: a runner renews only a regular file (Renewer
		// refuses anything else, and lapses). Judged as a missing lease
		// is, by a content that never changes while the file stays so.
		irregular = fsys.DescribeType(nr.Mode)
		content, err = irregularLease+nr.Mode.Type().String(), nil
	}
	if err != nil {
		return 0, "", err
	}
	look, since := watched.look(k, content, lease, now)
	switch {
	case look == leaseChanged:
		return Alive, "its lease was renewed while this process watched it", nil
	case look == leaseExpired && irregular != "":
		return Gone, fmt.Sprintf("its lease file is %s, which no runner renews, and stayed so for a whole lease (%v) of observation", irregular, lease), nil
	case look == leaseExpired:
		return Gone, fmt.Sprintf("its lease (%v) did not change for a whole lease of observation", lease), nil
	case irregular != "":
		return Undecided, fmt.Sprintf("its lease file is %s, which no runner renews; watched so for %v, it is judged gone after a whole lease (%v)",
			irregular, since.Round(time.Millisecond), lease), nil
	}
	return Undecided, fmt.Sprintf("its lease (%v) has been watched for %v without a change; it is judged gone after a whole lease",
		lease, since.Round(time.Millisecond)), nil
}

// staleBudget is how long a judge keeps reading a lease that fails with a
// stale handle (ESTALE: another client of a network filesystem replaced or
// renamed what this one had cached), from staleFirstDelay doubling to
// staleMaxDelay: as long as a reader's budget for a stale handle, which
// GlusterFS clients need (the repository's
// docs/benchmarks.md#glusterfs-how-long-a-client-lags).
const (
	staleBudget     = 2 * time.Second
	staleFirstDelay = 5 * time.Millisecond
	staleMaxDelay   = 200 * time.Millisecond
)

// readLease reads .run-n/lease: absentLease when the directory exists
// without it; an error matching fs.ErrNotExist when .run-n is gone.
func readLease(job *fsys.Dir, n uint64) (string, error) {
	deadline := time.Now().Add(staleBudget)
	delay := staleFirstDelay
	for {
		content, err := readLeaseOnce(job, n)
		if !fsys.IsTransientRead(err) || !time.Now().Before(deadline) {
			return content, err
		}
		time.Sleep(delay)
		delay = min(2*delay, staleMaxDelay)
	}
}

func readLeaseOnce(job *fsys.Dir, n uint64) (string, error) {
	run, err := job.OpenDir(RunName(n))
	if err != nil {
		return "", err
	}
	defer run.Close()
	f, err := run.OpenRecord(LeaseFile)
	if errors.Is(err, fs.ErrNotExist) {
		return absentLease, nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", &fsys.NotRegularError{Mode: fi.Mode()}
	}
	buf := make([]byte, maxLease) // longer than a counter: its first bytes still show a change
	k, err := io.ReadFull(f, buf)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = nil
	}
	return string(buf[:k]), err
}

// leaseLook is what one look at a lease showed.
type leaseLook int

const (
	leaseFirst   leaseLook = iota // the first look: nothing to compare with
	leaseChanged                  // renewed since the last look: the owner was alive in between
	leaseSame                     // unchanged, for less than a lease
	leaseExpired                  // unchanged for a whole lease of observation
)

// observer is what this process saw of one attempt's lease.
type observer struct {
	lease   time.Duration
	content string
	since   time.Time // monotonic: when content was first seen
	last    time.Time // monotonic: the latest look
}

// memory is what this process has seen of the leases it judges, so that
// judgements that do not wait (Start, Reconcile, each pass of ReconcileAll)
// add up to a whole lease of observation across calls. It is bounded: an
// entry is dropped once its attempt is judged gone or over, and an entry
// not looked at for forgetAfter(lease) is dropped at the next sweep (a
// judge that comes back later starts a new observation: a verdict is
// delayed, never wrong), so a process that judges attempts for months
// keeps only those of the last few leases.
type memory struct {
	mu    sync.Mutex
	m     map[string]*observer
	swept time.Time // monotonic: the last sweep
}

// watched is the process's memory; unexported, and nothing but Judge
// changes it.
var watched = memory{m: map[string]*observer{}}

// sweepEvery is how often, at most, look sweeps out forgotten entries.
const sweepEvery = 10 * time.Second

// forgetAfter is how long an unvisited entry is kept: long enough for
// reconcilers that come back every few leases (a verdict needs two looks a
// lease apart), short enough that memory follows the attempts judged now.
func forgetAfter(lease time.Duration) time.Duration { return max(10*lease, 10*time.Minute) }

// look records one look at the lease of the attempt k; it returns what the
// look showed and how long the current content has been seen.
func (mem *memory) look(k, content string, lease time.Duration, now time.Time) (leaseLook, time.Duration) {
	mem.mu.Lock()
	defer mem.mu.Unlock()
	if now.Sub(mem.swept) >= sweepEvery {
		mem.sweepLocked(now)
	}
	o := mem.m[k]
	var look leaseLook
	switch {
	case o == nil:
		o = &observer{content: content, since: now}
		mem.m[k] = o
		look = leaseFirst
	case content != o.content:
		o.content, o.since = content, now
		look = leaseChanged
	case now.Sub(o.since) >= lease:
		look = leaseExpired
	default:
		look = leaseSame
	}
	o.lease, o.last = lease, now
	since := now.Sub(o.since)
	if look == leaseExpired {
		delete(mem.m, k)
	}
	return look, since
}

func (mem *memory) sweepLocked(now time.Time) {
	mem.swept = now
	for k, o := range mem.m {
		if now.Sub(o.last) >= forgetAfter(o.lease) {
			delete(mem.m, k)
		}
	}
}

func (mem *memory) forget(k string) {
	mem.mu.Lock()
	delete(mem.m, k)
	mem.mu.Unlock()
}

func (mem *memory) len() int {
	mem.mu.Lock()
	defer mem.mu.Unlock()
	return len(mem.m)
}

// Package attempt is a runner's ownership of a job across hosts: claims,
// leases and fences, as directories and files inside the job directory,
// every operation relative to the job directory's descriptor (fsys.Dir).
//
// A runner owns attempt N of a job by creating <job>/.run-N: mkdir is
// exclusive and atomic at the server on local filesystems, NFS (v2 to v4)
// and SMB, so of any number of processes on any number of hosts exactly one
// succeeds. It renews a lease there (a counter in .run-N/lease, rewritten
// every lease/3) and writes each of its records through a temp file made in
// .run-N and renamed from it, by name from the job directory, into place.
// Another process that judges the owner gone (Judge: by its pid on its own
// host, else by its lease seen unchanged for a whole lease on the judge's
// own clock) fences the attempt (Fence): .run-N becomes .fenced-N, and one
// exclusive create elects the one process that takes the job over. After
// the fence the owner's next write fails at its rename, since .run-N no
// longer names its directory.
//
// Paths in, verdicts out: errors are the operating system's, *fsys.NotRegularError,
// or the sentinels below; the caller names them for its users.
package attempt

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/axqua/jobstore/internal/fsys"
)

// Names inside a job directory. Both directory prefixes start with '.', so
// scans that skip hidden names never take them for jobs or records.
const (
	RunPrefix    = ".run-"     // .run-N: attempt N is claimed and not over
	FencedPrefix = ".fenced-"  // .fenced-N: attempt N is over; kept for good, so nobody revives it
	LeaseFile    = "lease"     // .run-N/lease: the owner's renewal counter
	FenceMarker  = "fenced-by" // .fenced-N/fenced-by: created exclusively by the one taker
	EndMarker    = "ended"     // .fenced-N/ended: its owner ended the attempt, after a record named it
)

// RunName is attempt n's claim directory, ".run-n".
func RunName(n uint64) string { return RunPrefix + strconv.FormatUint(n, 10) }

// FencedName is attempt n's directory once it is over, ".fenced-n".
func FencedName(n uint64) string { return FencedPrefix + strconv.FormatUint(n, 10) }

// Parse parses ".run-N" and ".fenced-N" (N >= 1, no leading zero).
func Parse(name string) (n uint64, fenced, ok bool) {
	rest, isRun := strings.CutPrefix(name, RunPrefix)
	if !isRun {
		if rest, fenced = strings.CutPrefix(name, FencedPrefix); !fenced {
			return 0, false, false
		}
	}
	if rest == "" || (len(rest) > 1 && rest[0] == '0') {
		return 0, false, false
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] < '0' || rest[i] > '9' {
			return 0, false, false
		}
	}
	n, err := strconv.ParseUint(rest, 10, 64)
	if err != nil || n == 0 {
		return 0, false, false
	}
	return n, fenced, true
}

// Verdicts of Take and of a Claim's writes.
var (
	// ErrTaken: another process holds the attempt's claim (.run-N exists).
	ErrTaken = errors.New("the attempt is claimed by another process")
	// ErrOver: the attempt is over (.fenced-N exists) and cannot be claimed.
	ErrOver = errors.New("the attempt is over")
	// ErrFenced: this process's claim was fenced (taken over): .run-N no
	// longer names the directory it claimed.
	ErrFenced = errors.New("the attempt was taken over by another process")
)

// Claim is a held claim on attempt n of the job directory job: .run-n was
// created by this process, and is held open. The job directory is borrowed
// from the caller, who keeps it open for the claim's life.
type Claim struct {
	job   *fsys.Dir
	run   *fsys.Dir // .run-n, held from the claim on, to remove what the claim made even once fenced
	runID fsys.ID
	n     uint64
	at    time.Time // monotonic: just before the mkdir, the lease's first "renewal"
}

// Take makes this process the owner of attempt n (n >= 1) by creating
// .run-n in job. An existing .run-n is ErrTaken; an attempt that is over
// (.fenced-n, checked after the mkdir: a claimant that read an old status
// must not revive it) is ErrOver, and the new .run-n is removed again. On
// any other failure after the mkdir, .run-n is left: a claimant that never
// renews is judged gone after a lease, like a crashed one.
//
// Nothing is fsynced: the claim matters once the owner's first record names
// the attempt, and that write's directory fsync persists .run-n's entry too
// (same directory). After a power cut before it, .run-n may be lost; either
// way nobody ran the attempt.
func Take(job *fsys.Dir, n uint64) (*Claim, error) {
	if n == 0 {
		return nil, errors.New("attempt 0 cannot be claimed")
	}
	at := time.Now()
	name := RunName(n)
	// 0777 less the umask, as every directory jobstore makes: another user
	// of a shared root may have to fence or remove it.
	if err := job.Mkdir(name, 0o777); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, ErrTaken
		}
		return nil, err
	}
	if _, err := job.Lstat(FencedName(n)); err == nil {
		_ = job.RemoveDir(name) // ours and empty; a failure leaves an empty claim that expires
		return nil, ErrOver
	}
	run, err := job.OpenDir(name)
	if err != nil {
		return nil, err
	}
	id, err := run.ID()
	if err != nil {
		run.Close()
		return nil, err
	}
	return &Claim{job: job, run: run, runID: id, n: n, at: at}, nil
}

// N is the attempt claimed.
func (c *Claim) N() uint64 { return c.n }

// At is when the claim was made (monotonic, taken just before its mkdir):
// the lease's first renewal.
func (c *Claim) At() time.Time { return c.at }

// The write protocol's primitives for a record the owner writes (see the
// caller's write protocol): the temp file is made in .run-n and renamed from
// .run-n into the job directory, .run-n being looked up again by name from
// the job directory at each of the two steps, and checked to be the
// directory this process claimed. Once .run-n was renamed away (fenced), the
// step fails (ErrFenced) and nothing is written. Nothing is ever created
// through the directory held since the claim: a network filesystem's client
// that sees a create through a held directory may resolve the directory's
// old name to it again (GlusterFS does), and a fence would go unnoticed.

// current opens .run-n as the job directory names it now, never through a
// link, and checks that it is the directory this process claimed: gone, not
// a directory, or another directory is ErrFenced.
func (c *Claim) current() (*fsys.Dir, error) {
	run, err := c.job.OpenDir(RunName(c.n))
	if errors.Is(err, fs.ErrNotExist) || fsys.IsNotDir(err) {
		return nil, fmt.Errorf("%w (%w)", ErrFenced, err)
	}
	if err != nil {
		return nil, err
	}
	id, err := run.ID()
	if err == nil && id != c.runID {
		err = ErrFenced
	}
	if err != nil {
		run.Close()
		return nil, err
	}
	return run, nil
}

// CreateTemp creates the temp file for name in .run-n.
func (c *Claim) CreateTemp(name string, perm fs.FileMode) (fsys.File, string, error) {
	run, err := c.current()
	if err != nil {
		return nil, "", err
	}
	defer run.Close()
	return run.NewTemp(name, perm)
}

// Join is the path of the temp file tmp, for errors.
func (c *Claim) Join(tmp string) string { return c.run.Join(tmp) }

// Replace renames tmp from .run-n, as the job directory names it now, over
// name in the job directory. writeThrough and timeout are the job
// directory's (Windows).
func (c *Claim) Replace(tmp, name string, _ bool, _ time.Duration) error {
	run, err := c.current()
	if err != nil {
		return err
	}
	defer run.Close()
	return c.job.ReplaceFrom(run, tmp, name)
}

// PublishNew is not a claim's: an owner only replaces records.
func (c *Claim) PublishNew(string, string, bool) (bool, error) {
	return false, errors.ErrUnsupported
}

// Unlink removes the temp file tmp after a failed write: through the held
// .run-n, which reaches it even after a fence renamed the directory, and
// failing that through .fenced-n by name, for servers that resolve an open
// directory by the path it had (libfuse's high-level API: bindfs, sshfs).
func (c *Claim) Unlink(tmp string) error {
	err := c.run.Unlink(tmp)
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	fenced, ferr := c.job.OpenDir(FencedName(c.n))
	if ferr != nil {
		return err
	}
	defer fenced.Close()
	if ferr := fenced.Unlink(tmp); ferr == nil || !errors.Is(ferr, fs.ErrNotExist) {
		return ferr
	}
	return err
}

// Sync fsyncs the job directory, where the record was published.
func (c *Claim) Sync() error { return c.job.Sync() }

// ReplaceFailure is the job directory's account of a failed replace.
func (c *Claim) ReplaceFailure(name string, err error) (msg, remedy string) {
	return c.job.ReplaceFailure(name, err)
}

// Fenced reports whether the claim was taken over: .run-n is gone, or names
// another directory than the one claimed. Through a cached view (an NFS or
// FUSE client's caches) a fence may show late; the rename of each write is
// what stops a fenced owner.
func (c *Claim) Fenced() (bool, error) {
	id, err := c.job.EntryID(RunName(c.n))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true, nil
	case err != nil:
		return false, err
	}
	return id != c.runID, nil
}

// Withdraw removes a claim that no record names yet, so that the attempt
// can be claimed again: the files this process made in .run-n (its lease,
// stray temp files) through the held directory, then .run-n, relative to
// the job directory; never through a link, never outside the job.
func (c *Claim) Withdraw() error {
	defer c.Close()
	if fenced, err := c.Fenced(); err != nil || fenced {
		return err // not ours any more: leave it
	}
	names, err := c.run.Names()
	if err != nil {
		return err
	}
	for _, name := range names {
		if fi, err := c.run.Lstat(name); err == nil && fi.Mode().IsRegular() {
			_ = c.run.Unlink(name)
		}
	}
	return c.job.RemoveDir(RunName(c.n))
}

// End ends an attempt that is over: .run-n becomes .fenced-n (never
// replacing one), so that no claimant can revive it. Already fenced by
// another process is not an error.
//
// The caller has published a record naming attempt n (its owner ends only
// an attempt it wrote for), and End says so to later claimants: it first
// creates EndMarker in .run-n, as the job directory names it now and only if
// it is still this claim's, so that .fenced-n/ended tells a claimant whose
// view of the record is older (a network filesystem client's cache) that a
// newer record exists (see Ended). The marker is not fsynced: after a crash
// the record itself is what is durable, and caches start cold.
func (c *Claim) End() error {
	defer c.Close()
	if run, err := c.current(); err == nil {
		if f, err := run.CreateExcl(EndMarker, 0o644); err == nil {
			_ = f.Close()
		}
		run.Close()
	}
	err := c.job.RenameDirNoReplace(RunName(c.n), FencedName(c.n))
	if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrExist) || fsys.IsDirNotEmpty(err) {
		return nil
	}
	return err
}

// Ended reports whether attempt n is over and was ended by its owner
// (End), which it did after publishing a record naming attempt n: a record
// that names an earlier attempt, read after that, is an old view of the
// record. An attempt that was fenced, or whose .fenced-n is not there, is
// not ended. .fenced-n is opened without following a link (a link there is
// a *fsys.NotRegularError).
func Ended(job *fsys.Dir, n uint64) (bool, error) {
	fenced, err := job.OpenDir(FencedName(n))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer fenced.Close()
	_, err = fenced.Lstat(EndMarker)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Close releases .run-n's descriptor; the claim stays on disk. Nil-safe.
func (c *Claim) Close() error {
	if c == nil || c.run == nil {
		return nil
	}
	run := c.run
	c.run = nil
	return run.Close()
}

// Resume re-establishes a claim whose lease lapsed by the owner's own clock
// (a pause: SIGSTOP, a debugger, a laptop's sleep), with operations atomic
// at the server: it fences its own attempt n (Fence, with by naming this
// process) and, having won, claims attempt n+1. A fence of another process
// racing it either wins (Resume returns ErrFenced: the job was taken over)
// or loses (the claim goes on as attempt n+1), never both: the fence's
// exclusive create decides. The new claim's records must name n+1; c is
// closed either way.
func (c *Claim) Resume(by string) (*Claim, error) {
	defer c.Close()
	won, err := Fence(c.job, c.n, by)
	if err != nil {
		return nil, err
	}
	if !won {
		return nil, ErrFenced
	}
	next, err := Take(c.job, c.n+1)
	if errors.Is(err, ErrTaken) || errors.Is(err, ErrOver) {
		// Only a process that fenced attempt n claims n+1 over it, and this
		// one did: whoever holds n+1 took the job over some other way.
		return nil, ErrFenced
	}
	return next, err
}

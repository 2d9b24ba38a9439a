package jobstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"
)

// Lock is a held job.lock: an exclusive advisory lock on the job's lock file
// (flock(2) on Unix, LockFileEx on Windows). Only processes that take the
// lock through LockJob respect it; it does not stop anyone from writing.
type Lock struct {
	mu  sync.Mutex
	dir JobDir
	f   *os.File // nil once unlocked
}

// LockJob takes job.lock in dir, exclusively, without waiting.
//
// dir must hold a job.json (else ErrNotJob); job.lock is created (0644) if
// missing and never deleted, since deleting a lock file lets two processes
// lock two different files of the same name. dir must not be a symbolic
// link, and job.lock must be a regular file in it, else ErrNotRegular: a
// link named job.lock is never followed, so its target is never created.
// If another process, or another LockJob call in this process, holds the
// lock, LockJob fails at once with an *Error of kind ErrLocked whose message
// names the holder.
//
// The holder is named from job.lock itself: right after taking the lock,
// LockJob writes this process's pid, host, program name and the time into
// the file as one JSON object and a newline, not fsynced:
//
//	{"pid":4242,"host":"render-3","program":"myrunner","since":"2026-11-30T09:35:40.123456+00:00"}
//
// and Unlock empties it. Readers ignore keys they do not know and read at
// most 4 KiB. An empty file is a free lock, a holder that has not written
// yet, or a holder from an older jobstore; a killed holder's record stays
// until the next holder overwrites it, so it is believed only while the
// lock is held. A loser
// that finds the file empty (the holder has locked but not yet written)
// reads it again for up to about a quarter second; if there is still no
// record (a holder from a jobstore that did not write one, or one that
// could not write), it names the holder as status.json records it, on a
// best-effort basis. On Windows the lock covers one byte at offset 2^62, far
// beyond the record, not the whole file, so that the record stays readable.
//
// The lock is released by Unlock, and by the operating system when the
// holder's process exits or is killed: a free lock on a job whose status.json
// says running proves that its runner is gone (see Reconcile).
func LockJob(dir JobDir) (*Lock, error) {
	const op = "lock"
	d, err := openJobDir(op, dir)
	if err != nil {
		return nil, err
	}
	defer d.close()
	if _, err := d.lstat(SpecFile); errors.Is(err, fs.ErrNotExist) {
		return nil, errNotJob(op, dir)
	}
	f, err := d.openLock(LockFile)
	var nr *notRegularError
	if errors.As(err, &nr) {
		return nil, irregular(op, dir.LockPath(), nr)
	}
	if err != nil {
		return nil, stepError(op, dir.LockPath(), err, "cannot open the lock file",
			"give this user write permission on the job directory")
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if isLockHeld(err) {
			return nil, errLocked(op, dir.LockPath(), lockedBy(dir))
		}
		return nil, stepError(op, dir.LockPath(), err, "cannot lock the lock file",
			"the filesystem may not support locks (some network filesystems do not); keep job roots on a local disk")
	}
	writeLockHolder(f)
	return &Lock{dir: dir, f: f}, nil
}

// lockedBy describes the lock's holder for ErrLocked: from job.lock, else
// from status.json.
func lockedBy(dir JobDir) string {
	if h, ok := readLockHolder(dir); ok {
		return h.describe()
	}
	return holder(dir)
}

// holderReadAttempts keeps an ErrLocked error quick when status.json is
// damaged: the holder is named on a best-effort basis.
const holderReadAttempts = 2

// holder describes the lock's holder from status.json, for ErrLocked.
func holder(dir JobDir) string {
	st, err := ReadStatus(dir, WithRetries(holderReadAttempts, DefaultReadDelay))
	switch {
	case err != nil:
		return "held by another process (status.json is unreadable, so its holder is unknown: " + err.Error() + ")"
	case st == nil:
		return "held by another process (no status.json yet, so its holder is unknown)"
	case st.State != Running || st.PID == 0:
		return fmt.Sprintf("held by another process (status.json says %s, pid %d on host %q: the holder may be starting or reconciling the job)",
			st.State, st.PID, st.Host)
	}
	since := st.UpdatedAt
	if st.StartedAt != nil {
		since = *st.StartedAt
	}
	return fmt.Sprintf("held by pid %d on host %q, running since %s (last update %s), as status.json records it",
		st.PID, st.Host, since.Format(time.RFC3339), st.UpdatedAt.Format(time.RFC3339))
}

// Unlock releases the lock. The lock file stays. Unlocking twice is not an
// error.
func (l *Lock) Unlock() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	clearLockHolder(f) // while still locked: no other holder's record is erased
	err := unlockFile(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return stepError("unlock", l.dir.LockPath(), err, "cannot release the lock",
			"the lock is released anyway when this process exits")
	}
	return nil
}

package jobstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/axqua/jobstore/internal/flock"
	"github.com/axqua/jobstore/internal/fsys"
	"github.com/axqua/jobstore/internal/proc"
)

// Lock is a held job.lock: an exclusive advisory lock on the job's lock file
// (flock(2) on Unix, LockFileEx on Windows). Only processes that take the
// lock through LockJob respect it; it does not stop anyone from writing.
type Lock struct {
	mu   sync.Mutex
	dir  JobDir
	f    *os.File    // nil once unlocked
	prev *lockHolder // the record of a holder that died holding the lock, if one was left
}

// LockJob takes job.lock in dir, exclusively, without waiting.
//
// A dir whose last element is not a job ID ("/", ".", "root/j/..", a
// dot-name) is ErrInvalid, Subject "job_id", before anything is touched.
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
	if err := checkJobDir(op, dir); err != nil {
		return nil, err
	}
	dir = dir.clean()
	d, err := openJobDir(op, dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return lockJobIn(op, d)
}

// lockJobIn is LockJob in the job directory d, which the caller opened.
func lockJobIn(op string, d *fsys.Dir) (*Lock, error) {
	dir := jobDir(d)
	if _, err := d.Lstat(SpecFile); errors.Is(err, fs.ErrNotExist) {
		return nil, errNotJob(op, dir)
	}
	f, err := d.OpenLock(LockFile)
	var nr *fsys.NotRegularError
	if errors.As(err, &nr) {
		return nil, irregular(op, dir.LockPath(), nr)
	}
	if err != nil {
		return nil, lockOpenError(op, d, err)
	}
	if err := flock.Lock(f); err != nil {
		f.Close()
		if flock.IsHeld(err) {
			return nil, errLocked(op, dir.LockPath(), lockedBy(d))
		}
		return nil, stepError(op, dir.LockPath(), err, "cannot lock the lock file",
			"the filesystem may not support locks (some network filesystems do not); keep job roots on a local disk")
	}
	size := lockFileSize(f)
	prev := previousHolder(f, size)
	writeLockHolder(f, size)
	return &Lock{dir: dir, f: f, prev: prev}, nil
}

// lockOpenError is lockJobIn's error for an open of job.lock in d that
// failed with err. A job directory gone from its path or going (renamed
// away by Remove, which deletes job.json first; or a stale handle, the
// directory deleted on the server) was removed meanwhile: ErrNotJob, as
// wherever a Remove is met, whatever the open answered (a network
// filesystem whose attribute cache still shows the directory answers
// EACCES, ENOENT or ESTALE). Else a refused open names the permission.
func lockOpenError(op string, d *fsys.Dir, err error) error {
	dir := jobDir(d)
	if removedMeanwhile(d, err) {
		return errRemovedMeanwhile(op, dir)
	}
	remedy := "check the job directory and the disk, then try again"
	if errors.Is(err, fs.ErrPermission) {
		remedy = writePermissionRemedy
	}
	return stepError(op, dir.LockPath(), err, "cannot open the lock file", remedy)
}

// removedMeanwhile reports whether the job directory d is gone or going,
// err being what an operation in it answered: a stale handle, a directory
// no longer at its path, or one whose job.json is gone.
func removedMeanwhile(d *fsys.Dir, err error) bool {
	if fsys.IsStaleHandle(err) {
		return true
	}
	moved, merr := movedAway(d)
	if moved || fsys.IsStaleHandle(merr) {
		return true
	}
	_, serr := d.Lstat(SpecFile)
	return errors.Is(serr, fs.ErrNotExist) || fsys.IsStaleHandle(serr)
}

// Unlock releases the lock. The lock file stays. Unlocking twice is not an
// error.
func (l *Lock) Unlock() error { return l.unlock(false) }

// unlock is Unlock; with keepRecord, this process's holder record stays in
// job.lock, so that the next holder judges by it a claim this process may
// still leave behind, as it judges the claim of a holder that died holding
// the lock (Remove on Windows, which must let go of job.lock before the
// rename that ends its claim).
func (l *Lock) unlock(keepRecord bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	if !keepRecord {
		clearLockHolder(f) // while still locked: no other holder's record is erased
	}
	err := flock.Unlock(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return stepError("unlock", l.dir.LockPath(), err, "cannot release the lock",
			"the lock is released anyway when this process exits")
	}
	return nil
}

// lockHolder is the content of job.lock while a process holds it: one JSON
// object naming the holder, then a newline, e.g.
//
//	{"pid":4242,"host":"render-3","program":"myrunner","since":"2026-11-30T09:35:40.123456+00:00"}
//
// pid is the holder's process ID and host its os.Hostname ("" when
// unknown), as in status.json; program is the base name of the holder's
// executable ("" when unknown); since is when the lock was taken, written
// as the records' timestamps are. Readers ignore keys they do not know.
//
// LockJob writes it through the descriptor it has just locked, right after
// the lock is taken: at offset 0, then the file is truncated to that
// length. It is not fsynced: the record is only true while its writer holds
// the lock, that is while its process lives, and a crash that could lose
// the write releases the lock too. Unlock empties the file before releasing
// the lock. So an empty job.lock is a free lock, a holder that has not
// written yet, or a holder from a jobstore that did not write one; a
// process that was killed leaves its record in place until the next holder
// overwrites it, which is why a record is believed only while the lock is
// held.
type lockHolder struct {
	PID      int     `json:"pid"`
	Host     string  `json:"host"`
	Program  string  `json:"program"`
	Since    isoTime `json:"since"`
	PIDScope string  `json:"pid_scope,omitempty"` // as in status.json
	PIDStart string  `json:"pid_start,omitempty"` // as in status.json
}

// maxLockHolderSize bounds what a loser reads from job.lock: a record is a
// few hundred bytes; anything longer is not one.
const maxLockHolderSize = 4 << 10

// thisHolder describes this process as the holder of a lock taken now.
func thisHolder() lockHolder {
	h := thisProcess()
	h.Since = isoTime(Now())
	return h
}

// thisProcess is what a lock holder's record says of this process but the
// time, read once: its pid, host name and program do not change while it
// runs, and every lock would otherwise look them up again.
var thisProcess = sync.OnceValue(func() lockHolder {
	host, _ := os.Hostname() // unknown: written as ""
	var program string
	if exe, err := os.Executable(); err == nil {
		program = filepath.Base(exe)
	}
	return lockHolder{PID: os.Getpid(), Host: host, Program: program, PIDScope: selfScope(), PIDStart: selfStart()}
})

// lockFileSize is the size of the lock file f, which this process has just
// locked: what a holder left there, 0 when it is empty (Unlock empties it),
// -1 when fstat fails. It is taken after the lock, not at the open: a
// holder may have locked, written its record and died in between. An empty
// file is neither read nor truncated: a read would update its access time
// (its last truncate made it older than the change), a journaled write of
// the inode that a Start need not wait for.
func lockFileSize(f *os.File) int64 {
	fi, err := f.Stat()
	if err != nil {
		return -1
	}
	return fi.Size()
}

// writeLockHolder records this process in the lock file f, which it has
// just locked and which held size bytes (lockFileSize). It is best effort:
// the lock is held whether or not the record could be written, and a loser
// that finds no record falls back to status.json.
func writeLockHolder(f *os.File, size int64) {
	data, err := json.Marshal(thisHolder())
	if err != nil {
		return
	}
	data = append(data, '\n')
	// Write, then truncate: a reader never sees an empty file between the
	// two, only the new record, or the new record followed by the tail of a
	// longer old one, which is not one JSON value and is read again. No
	// tail is left when the file held no more than the record (only a
	// holder writes it, and this process holds the lock).
	if _, err := f.WriteAt(data, 0); err == nil && (size < 0 || size > int64(len(data))) {
		_ = f.Truncate(int64(len(data)))
	}
}

// previousHolder reads the record a holder left in the lock file f, which
// this process has just locked (before it writes its own) and which held
// size bytes (lockFileSize): a record there means its holder died holding
// the lock (Unlock empties it), and it names that process. nil when the
// file is empty or holds no record.
func previousHolder(f *os.File, size int64) *lockHolder {
	if size == 0 {
		return nil
	}
	buf := make([]byte, maxLockHolderSize)
	n, _ := f.ReadAt(buf, 0)
	var rec lockHolder
	if n == 0 || json.Unmarshal(buf[:n], &rec) != nil || rec.PID <= 0 {
		return nil
	}
	return &rec
}

// clearLockHolder empties the lock file before its lock is released, so
// that the next loser does not name a holder that has gone.
func clearLockHolder(f *os.File) { _ = f.Truncate(0) }

// Reading the holder's record: a loser may look between the winner's lock
// and its write. It reads again, waiting lockHolderFirstDelay, then twice as
// long each time, lockHolderReads times in all (about a quarter second),
// before it falls back to status.json. A holder writes its record within
// microseconds of locking, unless its process is not scheduled meanwhile.
const (
	lockHolderReads      = 9
	lockHolderFirstDelay = time.Millisecond
)

// readLockHolder reads the holder's record from the job.lock of dir (open
// as d), waiting for a holder that has just locked; never through a link,
// never blocking on a file that is not regular. ok is false when there is
// none to read.
func readLockHolder(d *fsys.Dir) (h lockHolder, ok bool) {
	dir := jobDir(d)
	delay := lockHolderFirstDelay
	for i := 0; i < lockHolderReads; i++ {
		if i > 0 {
			time.Sleep(delay)
			delay *= 2
		}
		data, err := readOnce("lock", d, jobRecord(dir, LockFile), maxLockHolderSize)
		if err != nil {
			var e *Error
			if errors.As(err, &e) && e.Sentinel == ErrTooLarge {
				return lockHolder{}, false // not a record, and will not become one
			}
			continue // absent, or busy (Windows)
		}
		if len(data) == 0 {
			continue
		}
		var rec lockHolder
		if json.Unmarshal(data, &rec) == nil && rec.PID > 0 {
			return rec, true
		}
	}
	return lockHolder{}, false
}

// describe names the holder for ErrLocked.
func (h lockHolder) describe() string {
	prog := ""
	if h.Program != "" {
		prog = fmt.Sprintf(" (program %q)", h.Program)
	}
	return fmt.Sprintf("held by pid %d on host %q%s since %s, as job.lock records it",
		h.PID, h.Host, prog, time.Time(h.Since).Format(time.RFC3339))
}

// lockedBy describes the holder of the lock of dir (open as d) for
// ErrLocked: from job.lock, else from status.json.
func lockedBy(d *fsys.Dir) string {
	if h, ok := readLockHolder(d); ok {
		return h.describe()
	}
	return holderFromStatus(d)
}

// holderReadAttempts keeps an ErrLocked error quick when status.json is
// damaged: the holder is named on a best-effort basis.
const holderReadAttempts = 2

// holderFromStatus describes the lock's holder from the status.json of dir
// (open as d), for ErrLocked.
func holderFromStatus(d *fsys.Dir) string {
	st, err := readStatusIn(d, newReadOptions([]ReadOption{WithRetries(holderReadAttempts, DefaultReadDelay)}), statusSchema())
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

// selfScope and selfStart are what a Run records of its own process, so
// that a judge on the same host can tell whether it is alive.
func selfScope() string { return proc.Scope() }

func selfStart() string { return proc.SelfStart() }

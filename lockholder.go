package jobstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

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
	PID     int     `json:"pid"`
	Host    string  `json:"host"`
	Program string  `json:"program"`
	Since   isoTime `json:"since"`
}

// maxLockHolderSize bounds what a loser reads from job.lock: a record is a
// few hundred bytes; anything longer is not one.
const maxLockHolderSize = 4 << 10

// thisHolder describes this process as the holder of a lock taken now.
func thisHolder() lockHolder {
	host, _ := os.Hostname() // unknown: written as ""
	var program string
	if exe, err := os.Executable(); err == nil {
		program = filepath.Base(exe)
	}
	return lockHolder{PID: os.Getpid(), Host: host, Program: program, Since: isoTime(Now())}
}

// writeLockHolder records this process in the lock file f, which it has
// just locked. It is best effort: the lock is held whether or not the
// record could be written, and a loser that finds no record falls back to
// status.json.
func writeLockHolder(f *os.File) {
	data, err := json.Marshal(thisHolder())
	if err != nil {
		return
	}
	data = append(data, '\n')
	// Write, then truncate: a reader never sees an empty file between the
	// two, only the new record, or the new record followed by the tail of a
	// longer old one, which is not one JSON value and is read again.
	if _, err := f.WriteAt(data, 0); err == nil {
		_ = f.Truncate(int64(len(data)))
	}
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

// readLockHolder reads the holder's record from job.lock, waiting for a
// holder that has just locked. ok is false when there is none to read.
func readLockHolder(dir JobDir) (h lockHolder, ok bool) {
	delay := lockHolderFirstDelay
	for i := 0; i < lockHolderReads; i++ {
		if i > 0 {
			time.Sleep(delay)
			delay *= 2
		}
		data, err := readLockRecord(dir)
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

// readLockRecord reads job.lock as a record: never through a link, never
// blocking on a file that is not regular.
func readLockRecord(dir JobDir) ([]byte, error) {
	d, err := openJobDir("lock", dir)
	if err != nil {
		return nil, err
	}
	defer d.close()
	return readOnce("lock", d, jobRecord(dir, LockFile), maxLockHolderSize)
}

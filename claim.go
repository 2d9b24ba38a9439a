package jobstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/axqua/jobstore/internal/proc"
)

// Names of the per-attempt ownership directories inside a job directory.
// Both start with '.', so List, JobDirs and directory scans that skip hidden
// names never take them for jobs or records, and IsTempName is false for them
// (no digits directly after a record's name).
const (
	runPrefix    = ".run-"    // .run-N: attempt N is claimed and not over
	fencedPrefix = ".fenced-" // .fenced-N: attempt N is over (released or taken over); kept forever
	ownerFile    = "owner.json"
	leaseFile    = "lease"
)

// ownerSchemaVersion is owner.json's schema_version.
const ownerSchemaVersion = 1

// ownerRecord is owner.json inside .run-N: who claimed attempt N. It is
// written once, after the claim; an observer may find .run-N without it (a
// claimant that is starting, or that died before writing it) and then
// judges by the lease alone. claimed_at is for people: no host compares it
// with its own clock.
type ownerRecord struct {
	SchemaVersion int     `json:"schema_version"`
	JobID         string  `json:"job_id"`
	Attempt       uint64  `json:"attempt"`
	Host          string  `json:"host,omitempty"`
	PID           int     `json:"pid"`
	PIDScope      string  `json:"pid_scope,omitempty"` // see proc.Scope
	PIDStart      string  `json:"pid_start,omitempty"` // see proc.Probe
	LeaseMS       int64   `json:"lease_ms"`
	ClaimedAt     isoTime `json:"claimed_at"`
}

func (o ownerRecord) lease() time.Duration { return time.Duration(o.LeaseMS) * time.Millisecond }

func runDirPath(dir JobDir, n uint64) string {
	return filepath.Join(string(dir), runPrefix+strconv.FormatUint(n, 10))
}

func fencedDirPath(dir JobDir, n uint64) string {
	return filepath.Join(string(dir), fencedPrefix+strconv.FormatUint(n, 10))
}

// attemptDir parses ".run-N" and ".fenced-N".
func attemptDir(name string) (n uint64, fenced, ok bool) {
	rest, isRun := strings.CutPrefix(name, runPrefix)
	if !isRun {
		if rest, fenced = strings.CutPrefix(name, fencedPrefix); !fenced {
			return 0, false, false
		}
	}
	if !allDigits(rest) || (len(rest) > 1 && rest[0] == '0') {
		return 0, false, false
	}
	n, err := strconv.ParseUint(rest, 10, 64)
	if err != nil || n == 0 {
		return 0, false, false
	}
	return n, fenced, true
}

// claim is a held claim on attempt n: .run-n was created by this process.
type claim struct {
	dir    JobDir
	n      uint64
	runDir string
	owner  ownerRecord
	held   *heldDir  // runDir held open for the owner's writes; nil where the platform holds nothing
	at     time.Time // monotonic: just before the mkdir, the lease's first "renewal"
}

// claimAttempt makes this process the owner of attempt n (n >= 1) by
// creating .run-n: mkdir is exclusive and atomic at the server on local
// filesystems, NFS (v2 to v4: MKDIR fails with EXIST) and SMB, so of any
// number of processes on any number of hosts exactly one succeeds. Then it
// checks that .fenced-n does not exist (a claimant that read an old status
// must not revive an attempt that is over: .run-n is free again after a
// fence), and writes owner.json (not fsynced: see the comment inside).
//
// A taken attempt is an *Error of kind ErrLocked naming the owner as
// owner.json records it; an attempt that is over is ErrLocked too (its
// .run-n is removed again). On any other failure .run-n is left: an owner
// that never renews is judged expired after its lease, like a crashed one.
func claimAttempt(dir JobDir, n uint64, lease time.Duration, host string) (*claim, error) {
	const op = "claim"
	run := runDirPath(dir, n)
	if n == 0 || lease <= 0 {
		return nil, errInvalid(op, run, "attempt", n, "attempt >= 1 and a positive lease", fmt.Sprintf("attempt %d with lease %v", n, lease), "")
	}
	at := time.Now()
	if err := os.Mkdir(run, 0o755); err != nil {
		switch {
		case errors.Is(err, fs.ErrExist):
			return nil, errClaimTaken(op, run, "attempt "+strconv.FormatUint(n, 10)+" is claimed: "+describeOwner(run),
				"another runner owns this attempt; read the status again and wait for it to finish or be judged gone")
		case errors.Is(err, fs.ErrNotExist):
			return nil, errNotJob(op, dir)
		}
		return nil, stepError(op, run, err, "cannot create the attempt's ownership directory", "give this user write permission on the job directory")
	}
	if _, err := os.Lstat(fencedDirPath(dir, n)); err == nil {
		_ = os.Remove(run) // ours and empty; a failure leaves an empty claim that expires
		return nil, errClaimTaken(op, run, "attempt "+strconv.FormatUint(n, 10)+" is over ("+fencedPrefix+strconv.FormatUint(n, 10)+" exists)",
			"read the status again: another runner ran or took over this attempt")
	}
	// No fsync here, of the directory or of owner.json: the claim matters
	// once the runner's first status write names the attempt, and that
	// write's directory fsync persists .run-n's entry too (same directory).
	// After a power cut before it, .run-n may be lost or lack owner.json;
	// either way nobody ran the attempt, and a claim without owner.json is
	// judged by its lease. This keeps Start's cost to one durable write.
	c := &claim{dir: dir, n: n, runDir: run, at: at, owner: ownerRecord{
		SchemaVersion: ownerSchemaVersion, JobID: dir.ID(), Attempt: n, Host: host,
		PID: os.Getpid(), PIDScope: proc.Scope(), PIDStart: proc.SelfStart(),
		LeaseMS: lease.Milliseconds(), ClaimedAt: isoTime(Now()),
	}}
	data, err := encodeRecord(op, run, "owner", "cannot encode the owner record", "", c.owner)
	if err != nil {
		return nil, err
	}
	if c.held, err = holdDir(dir, filepath.Base(run)); err != nil {
		return nil, fenceError(op, dir, n, err)
	}
	// owner.json is written in place, once, into the directory this process
	// just made: a reader that catches it incomplete judges the owner by its
	// lease, as it does a claim without owner.json. Where no directory is
	// held, the write protocol publishes it whole.
	if c.held != nil {
		err = c.held.writeOnce(ownerFile, data)
	} else {
		err = writeRecord(recordAt{dir: run, name: ownerFile}, data, newWriteOptions([]WriteOption{NoSync()}), replaceTarget)
	}
	if err != nil {
		_ = c.held.close()
		return nil, fenceError(op, dir, n, err)
	}
	return c, nil
}

// readOwner reads owner.json of attempt n; nil, nil when .run-n exists
// without it.
func readOwner(runDir string) (*ownerRecord, error) {
	b, err := os.ReadFile(filepath.Join(runDir, ownerFile))
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Lstat(runDir); serr != nil {
			return nil, serr
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var o ownerRecord
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, withPath(errCorrupt(len(b), "", "the owner is then judged by its lease alone", err), "read owner", filepath.Join(runDir, ownerFile))
	}
	return &o, nil
}

// describeOwner names attempt's owner for an error, best effort.
func describeOwner(runDir string) string {
	o, err := readOwner(runDir)
	switch {
	case err != nil:
		return "its owner is unknown (" + err.Error() + ")"
	case o == nil:
		return "its owner is starting (no " + ownerFile + " yet)"
	}
	return fmt.Sprintf("owned by pid %d on host %q since %s, lease %v", o.PID, o.Host,
		time.Time(o.ClaimedAt).Format(time.RFC3339), o.lease())
}

package jobstore

import (
	"time"

	"github.com/axqua/jobstore/internal/attempt"
	"github.com/axqua/jobstore/internal/fsys"
)

// Hooks for the multi-host tests in package jobstore_test, which act as
// another host's claimant or fencer would (the attempt layer itself is
// tested in internal/attempt).

// ClaimAttempt claims attempt n for this process, as a starter that then
// crashes before its first status write would, and returns its directory.
func ClaimAttempt(dir JobDir, n uint64) (string, error) {
	jd, err := openJobDir("claim", dir)
	if err != nil {
		return "", err
	}
	defer jd.Close()
	c, err := takeAttempt("claim", jd, n)
	if err != nil {
		return "", err
	}
	return runPath(dir, n), c.Close()
}

// FenceAttempt ends attempt n as another host's fencer would; won is true
// for exactly one caller.
func FenceAttempt(dir JobDir, n uint64) (bool, error) {
	jd, err := openJobDir("fence", dir)
	if err != nil {
		return false, err
	}
	defer jd.Close()
	return fenceAttempt("fence", jd, n)
}

// JudgeAttempt looks once at attempt n's owner as the runner that wrote the
// job's status, from host; the verdict as its String.
func JudgeAttempt(dir JobDir, n uint64, host string, fallback time.Duration) (string, string, error) {
	jd, err := openJobDir("judge", dir)
	if err != nil {
		return "", "", err
	}
	defer jd.Close()
	st, err := readStatusIn(jd, newReadOptions(nil), statusSchema())
	if err != nil {
		return "", "", err
	}
	v, why, err := judgeOwner("judge", jd, n, ownerOf(st), host, fallback)
	return v.String(), why, err
}

// RunDirPath and FencedDirPath name attempt n's directories.
func RunDirPath(dir JobDir, n uint64) string    { return runPath(dir, n) }
func FencedDirPath(dir JobDir, n uint64) string { return fencedPath(dir, n) }

// LeaseName is the lease file in an attempt directory.
const LeaseName = attempt.LeaseFile

// Owner holds a claim as another host's runner would, writing through it
// without a Run's check of its own lease, so that a test can show the fence
// alone stopping it.
type Owner struct {
	jd  *fsys.Dir
	dir JobDir
	c   *attempt.Claim
	ren *attempt.Renewer
}

// ClaimAsOwner claims attempt n of dir and renews its lease.
func ClaimAsOwner(dir JobDir, n uint64, lease time.Duration) (*Owner, error) {
	jd, err := openJobDir("claim", dir)
	if err != nil {
		return nil, err
	}
	c, err := takeAttempt("claim", jd, n)
	if err != nil {
		jd.Close()
		return nil, err
	}
	return &Owner{jd: jd, dir: dir, c: c, ren: attempt.StartRenewer(c, lease, nil)}, nil
}

// Write writes st through the claim: ErrNotOwner once it was fenced.
func (o *Owner) Write(st JobStatus, opts ...WriteOption) error {
	st.Attempt = o.c.N()
	return ownerWriteError("write status", o.dir, o.c.N(), writeStatusAs(o.c, o.dir, st, nil, opts...))
}

// Check is the lease's verdict by this process's clock (nil: may write).
func (o *Owner) Check() error { return o.ren.Check(time.Now()) }

// Close stops renewing and releases the claim's descriptors.
func (o *Owner) Close() {
	o.ren.Stop()
	_ = o.c.Close()
	_ = o.jd.Close()
}

// WriteAfter is Write with before called between the temp file's creation
// in the attempt directory and its rename into place: the instant at which
// a fence can come between the two steps of an owner's write.
func (o *Owner) WriteAfter(st JobStatus, before func()) error {
	st.Attempt = o.c.N()
	return ownerWriteError("write status", o.dir, o.c.N(), writeStatusAs(pausing{o.c, before}, o.dir, st, nil))
}

// pausing is a claim whose Replace first calls before.
type pausing struct {
	*attempt.Claim
	before func()
}

func (p pausing) Replace(tmp, name string, writeThrough bool, timeout time.Duration) error {
	p.before()
	return p.Claim.Replace(tmp, name, writeThrough, timeout)
}

// DeadRunnerFencedByADeadTaker makes a job whose runner of attempt 1 died on
// this host, and whose taker won the fence of attempt 1 and died.
var DeadRunnerFencedByADeadTaker = deadRunnerFencedByADeadTaker

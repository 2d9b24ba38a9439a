package jobstore

import (
	"context"
	"time"
)

// Hooks for the multi-host tests in package jobstore_test, which need child
// processes (TestMain lives there).

// ClaimAttempt claims attempt n for this process and returns its run dir.
func ClaimAttempt(dir JobDir, n uint64, lease time.Duration, host string) (string, error) {
	c, err := claimAttempt(dir, n, lease, host)
	if err != nil {
		return "", err
	}
	_ = c.held.close() // the tests write as the owner through WriteStatusFenced
	return c.runDir, nil
}

// FenceAttempt ends attempt n; won is true for exactly one caller.
func FenceAttempt(dir JobDir, n uint64) (bool, error) { return fenceAttempt(dir, n) }

// WriteStatusFenced writes st as attempt n's owner.
func WriteStatusFenced(dir JobDir, n uint64, st JobStatus, opts ...WriteOption) error {
	return writeStatusFenced(dir, n, nil, st, opts...)
}

// Renewer is a running lease renewer.
type Renewer = renewer

// StartRenewer starts renewing attempt n's lease.
func StartRenewer(dir JobDir, n uint64, lease time.Duration) (*Renewer, error) {
	return startRenewer(dir, n, lease, time.Now()), nil
}

// Check is renewer.check.
func (r *renewer) Check(now time.Time) error { return r.check(now) }

// JudgeAttempt is judgeAttempt; the verdict as its String.
func JudgeAttempt(ctx context.Context, dir JobDir, n uint64, host string, fallback, poll time.Duration) (string, string, error) {
	v, why, err := judgeAttempt(ctx, dir, n, host, fallback, poll, true)
	return v.String(), why, err
}

// RunDirPath and FencedDirPath name attempt n's directories.
func RunDirPath(dir JobDir, n uint64) string    { return runDirPath(dir, n) }
func FencedDirPath(dir JobDir, n uint64) string { return fencedDirPath(dir, n) }

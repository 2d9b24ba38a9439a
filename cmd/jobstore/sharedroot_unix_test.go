//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/axqua/jobstore/internal/prereq"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// The users of these tests: numeric ids that need no entry in /etc/passwd.
// alice submits and removes, viewer (a GUI) cancels; both are in the
// root's group. nobody is in no group of the root.
const (
	sharedGID  = 61000
	aliceUID   = 61001
	viewerUID  = 61002
	nobodyID   = 65534
	sharedMode = 0o775 | os.ModeSetgid // chmod 2775, as docs/guarantees.md says
)

// userCLI is the jobstore binary, run as other users than this test's.
type userCLI struct {
	bin string // a copy of the binary where any user may run it
}

// newUserCLI skips unless the test runs as root, the only user that may
// run a command as another; it makes base and what leads to it searchable
// by everyone, and copies the binary there.
func newUserCLI(t *testing.T, base string) userCLI {
	t.Helper()
	if os.Geteuid() != 0 {
		prereq.Skip(t, "root", "runs the jobstore command as other users (syscall.Credential), which needs root")
	}
	for _, d := range []string{filepath.Dir(base), base} {
		require.NoError(t, os.Chmod(d, 0o755)) // t.TempDir makes them 0700
	}
	bin := filepath.Join(base, "jobstore")
	src, err := os.Open(cli)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
	return userCLI{bin: bin}
}

// run runs the binary with args as uid and gid, with umask 002 (set by the
// shell that then becomes the binary: exec.Cmd cannot set a umask).
func (u userCLI) run(t *testing.T, uid, gid uint32, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", `umask 002; exec "$0" "$@"`, u.bin}, args...)...)
	cmd.Env = append(os.Environ(), cliEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{gid}}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{stdout.String(), stderr.String(), code}
}

// A user who may not write in the job directory (a GUI running as another
// user) is told which permission is missing, where, and how a root is
// shared; nothing is written.
func TestCancel_ByAnotherUserNamesTheMissingPermission(t *testing.T) {
	base := testdir.New(t)
	u := newUserCLI(t, base)
	root := filepath.Join(base, "jobs")
	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	// As a root made by one user with umask 022 is, whatever this test's umask.
	require.NoError(t, os.Chmod(root, 0o755))
	require.NoError(t, os.Chmod(string(dir), 0o755))
	require.NoError(t, os.Chmod(dir.LockPath(), 0o644))

	r := u.run(t, nobodyID, nobodyID, "cancel", string(dir), "--by", "viewer")
	requireCode(t, r, exitRuntime)
	requireErrorLine(t, r)
	require.Contains(t, r.stderr, "permission denied")
	require.Contains(t, r.stderr, "needs write permission on "+string(dir)+" to create cancel.json")
	require.Contains(t, r.stderr, "setgid")
	require.Contains(t, r.stderr, "umask 002")
	require.Contains(t, r.stderr, "Sharing a root between users")
	require.NotContains(t, r.stderr, "free space")

	_, err = os.Lstat(dir.CancelPath())
	require.ErrorIs(t, err, os.ErrNotExist, "nothing was written")
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	require.Equal(t, jobstore.Queued, st.State)
}

// A root set up as docs/guarantees.md says (one group, directories 2775,
// umask 002) lets every user of the group do their part: alice submits,
// viewer cancels (creating cancel.json, a claim and a new status in a
// directory alice made), and alice removes the job, viewer's files with it.
func TestCancel_SharedRootAsDocumentedLetsAnotherUserCancel(t *testing.T) {
	base := testdir.New(t)
	u := newUserCLI(t, base)
	root := filepath.Join(base, "shared")
	require.NoError(t, os.Mkdir(root, 0o700))
	require.NoError(t, os.Chown(root, 0, sharedGID))
	require.NoError(t, os.Chmod(root, sharedMode))

	r := u.run(t, aliceUID, sharedGID, "submit", root, "--kind", "k", "--id", "j")
	requireCode(t, r, exitOK)
	dir := jobstore.JobDir(filepath.Join(root, "j"))

	r = u.run(t, viewerUID, sharedGID, "cancel", string(dir), "--by", "viewer")
	requireCode(t, r, exitOK)
	require.Contains(t, r.stdout, "job j is cancelled")
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	require.Equal(t, jobstore.Cancelled, st.State)

	r = u.run(t, aliceUID, sharedGID, "rm", string(dir))
	requireCode(t, r, exitOK)
	_, err = os.Lstat(string(dir))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// In a root set up for sharing, a worker running as its own user takes and
// runs a job another user submitted (a claim, a lease, a new status and
// the output files in a directory it did not make), and the submitter
// then removes the job, the worker's files with it.
func TestWork_InASharedRootAnotherUserRunsTheJob(t *testing.T) {
	const workerUID = 61003
	base := testdir.New(t)
	u := newUserCLI(t, base)
	root := filepath.Join(base, "shared")
	require.NoError(t, os.Mkdir(root, 0o700))
	require.NoError(t, os.Chown(root, 0, sharedGID))
	require.NoError(t, os.Chmod(root, sharedMode))

	requireCode(t, u.run(t, aliceUID, sharedGID, "submit", root, "--kind", "k", "--id", "j"), exitOK)
	r := u.run(t, workerUID, sharedGID, "work", root, "--until-empty", "--", "/bin/true")
	requireCode(t, r, exitOK)
	dir := jobstore.JobDir(filepath.Join(root, "j"))
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	require.Equal(t, jobstore.Succeeded, st.State)

	requireCode(t, u.run(t, aliceUID, sharedGID, "rm", string(dir)), exitOK)
	_, err = os.Lstat(string(dir))
	require.ErrorIs(t, err, os.ErrNotExist)
}

package jobstore_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// twoHosts is one backing directory seen through two bindfs mounts, A and
// B. Two FUSE mounts have independent lock tables (a flock through A does
// not block one through B), as two NFS clients with local locks or two SMB
// mounts without lock propagation have; with forwarding, locks reach the
// backing directory and the mounts share them, as NFSv4 clients do.
// Processes that use A and B claim different host identities (HostEnv), so
// one machine plays two hosts.
type twoHosts struct {
	Backing, A, B string
}

// mountTwoHosts mounts the kit under a fresh temp dir and unmounts it at
// cleanup. It skips when not root or when bindfs or /dev/fuse is missing
// (CI runs these tests as root and fails on a skip).
func mountTwoHosts(t *testing.T, forwardLocks bool) *twoHosts {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("two-host kit: needs root to mount bindfs (CI runs it as root)")
	}
	if _, err := exec.LookPath("bindfs"); err != nil {
		t.Skip("two-host kit: bindfs is not installed (apt-get install -y bindfs)")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("two-host kit: /dev/fuse is missing")
	}
	base := tempDir(t)
	h := &twoHosts{Backing: filepath.Join(base, "backing"), A: filepath.Join(base, "hostA"), B: filepath.Join(base, "hostB")}
	for _, d := range []string{h.Backing, h.A, h.B} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	args := []string{}
	if forwardLocks {
		args = append(args, "--enable-lock-forwarding", "--multithreaded")
	}
	for _, mnt := range []string{h.A, h.B} {
		out, err := exec.Command("bindfs", append(args, h.Backing, mnt)...).CombinedOutput()
		require.NoError(t, err, "bindfs %s: %s", mnt, out)
		t.Cleanup(func() { unmount(t, mnt) })
	}
	return h
}

// unmount detaches a FUSE mount, retrying while a child still holds it.
func unmount(t *testing.T, mnt string) {
	t.Helper()
	var out []byte
	var err error
	for range 50 {
		if out, err = exec.Command("fusermount", "-u", mnt).CombinedOutput(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	out2, err2 := exec.Command("umount", "-l", mnt).CombinedOutput()
	if err2 != nil {
		t.Errorf("cannot unmount %s: %v %s; %v %s", mnt, err, out, err2, out2)
	}
}

// flockNB takes an exclusive flock without waiting; false when held.
func flockNB(t *testing.T, path string) (*os.File, bool) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return f, false
	}
	require.NoError(t, err)
	return f, true
}

func TestTwoHosts_KitLocksAreIndependentWithoutForwarding(t *testing.T) {
	h := mountTwoHosts(t, false)
	_, ok := flockNB(t, filepath.Join(h.A, "job.lock"))
	require.True(t, ok)
	_, ok = flockNB(t, filepath.Join(h.A, "job.lock"))
	require.False(t, ok, "two flocks through one mount must conflict")
	_, ok = flockNB(t, filepath.Join(h.B, "job.lock"))
	require.True(t, ok, "a flock through B must not see the one through A: the kit needs independent lock tables")
}

func TestTwoHosts_KitLocksAreSharedWithForwarding(t *testing.T) {
	h := mountTwoHosts(t, true)
	_, ok := flockNB(t, filepath.Join(h.A, "job.lock"))
	require.True(t, ok)
	_, ok = flockNB(t, filepath.Join(h.B, "job.lock"))
	require.False(t, ok, "with lock forwarding, a flock through B must see the one through A")
}

package jobstore_test

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/axqua/jobstore/internal/prereq"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The two-host kit: one jobs directory seen through two mounts, A and B, of
// a filesystem that more than one host can share. Processes that use A and
// B claim different host identities (HostEnv), so one machine plays two
// hosts. Every TestTwoHosts… test runs its body on each filesystem of the
// kit (forEachTwoHosts), as a subtest named after it:
//
//   - bindfs: two bindfs mounts of one local directory. Their lock tables are
//     independent (a flock through A does not block one through B), as two
//     NFSv3 clients', NFS clients' with local_lock, or SMB clients' with nobrl.
//   - bindfs-forwardedlocks: the same with --enable-lock-forwarding, so
//     flocks reach the local directory and the mounts share them.
//   - glusterfs: two FUSE clients of one GlusterFS volume, a real distributed
//     filesystem: flock is forwarded to the brick (NFSv4-like), and a change
//     made through A reaches B up to about a second late (md-cache and
//     quick-read cache-timeout, 1 s by default), whatever B's poll interval.
//   - glusterfs-nolocks: a bindfs stacked on each of the two GlusterFS
//     clients, so that flocks stay local to each mount: GlusterFS's caching
//     and stale handles with locks that do not reach. The two caches add
//     up: a change can reach the other mount about 2 s late.
//
// The GlusterFS server is started outside the tests (bash .ci/gluster.sh
// start); the tests mount and unmount their own clients. Where a filesystem
// is missing its subtests skip, saying what is missing and the command that
// brings it; CI fails on any skip.

// twoHosts is one jobs directory seen through the two mounts of a kit.
type twoHosts struct {
	// A and B are the directory as the two hosts see it. Tests set up jobs
	// through A or B, as users on those hosts would.
	A, B string
	// Server is the directory as the server holds it (bindfs's backing
	// directory, GlusterFS's brick): read it for the truth, never write
	// there (a GlusterFS brick must only be changed through a client).
	Server string
	// LocksForwarded: a flock through A blocks one through B.
	LocksForwarded bool
	// Lease is the runners' lease for the tests on this filesystem
	// (twoHostLeaseFor).
	Lease time.Duration
	// Staleness is how late a change made through one mount may be seen
	// through the other (0: at once): the C and D of the lease bound.
	Staleness time.Duration
}

// twoHostsKit is one filesystem of the kit.
type twoHostsKit struct {
	name           string
	locksForwarded bool
	// staleness is how late a change made through one mount may be seen
	// through the other (0: at once).
	staleness time.Duration
	mount     func(t *testing.T) (a, b, server string)
}

// glusterStaleness is how late a GlusterFS client sees a change made
// through another with the volume's default options: md-cache and
// quick-read keep what they fetched for 1 s (performance.md-cache-timeout,
// performance.quick-read cache-timeout).
const glusterStaleness = time.Second

// bindfsAttrTimeout is how long the kernel keeps a bindfs file's
// attributes (libfuse's default attr_timeout): stacked on a GlusterFS
// client, its size can lag a further second behind the client's, and a
// read stops at the size the kernel holds.
const bindfsAttrTimeout = time.Second

// twoHostsKits is every filesystem of the kit, in the order the subtests run.
func twoHostsKits() []twoHostsKit {
	return []twoHostsKit{
		{name: "bindfs", mount: func(t *testing.T) (string, string, string) { return mountBindfsTwice(t, false) }},
		{name: "bindfs-forwardedlocks", locksForwarded: true, mount: func(t *testing.T) (string, string, string) { return mountBindfsTwice(t, true) }},
		{name: "glusterfs", locksForwarded: true, staleness: glusterStaleness, mount: func(t *testing.T) (string, string, string) { return mountGlusterTwice(t, false) }},
		{name: "glusterfs-nolocks", staleness: glusterStaleness + bindfsAttrTimeout, mount: func(t *testing.T) (string, string, string) { return mountGlusterTwice(t, true) }},
	}
}

// forEachTwoHosts runs body once on each filesystem of the kit, as a
// subtest named after it, each on fresh mounts that are unmounted when the
// subtest ends (after the subtest's own cleanups, which kill its children).
func forEachTwoHosts(t *testing.T, body func(t *testing.T, h *twoHosts)) {
	t.Helper()
	for _, k := range twoHostsKits() {
		t.Run(k.name, func(t *testing.T) {
			a, b, server := k.mount(t)
			body(t, &twoHosts{A: a, B: b, Server: server, LocksForwarded: k.locksForwarded, Lease: twoHostLeaseFor(k.staleness),
				Staleness: k.staleness})
		})
	}
}

// twoHostLeaseFor is the lease for runners on a filesystem whose other
// mount sees a change up to staleness late. A live runner must never be
// judged gone: L > 1.5 (C + J) (docs/platforms.md, "The lease bound"), with
// C the staleness and J the runner's worst delay between two renewals.
// twoHostLease alone leaves J 1 s on a loaded machine; on GlusterFS the
// lease grows by 1.5 C so that J keeps that second.
func twoHostLeaseFor(staleness time.Duration) time.Duration {
	return twoHostLease + staleness*3/2
}

// needKitRoot skips unless the test can mount: root and /dev/fuse.
func needKitRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		prereq.Skip(t, "root", "two-host kit: needs root to mount")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		prereq.Skip(t, "/dev/fuse", "two-host kit: /dev/fuse is missing (apt-get install -y fuse3, and a kernel with FUSE)")
	}
}

func needBindfs(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("bindfs"); err != nil {
		prereq.Skip(t, "bindfs", "two-host kit: bindfs is not installed (apt-get install -y bindfs)")
	}
}

// mountBindfsTwice mounts a fresh local directory twice with bindfs.
func mountBindfsTwice(t testing.TB, forwardLocks bool) (a, b, server string) {
	t.Helper()
	needKitRoot(t)
	needBindfs(t)
	base := tempDir(t)
	server, a, b = filepath.Join(base, "backing"), filepath.Join(base, "hostA"), filepath.Join(base, "hostB")
	for _, d := range []string{server, a, b} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	for _, mnt := range []string{a, b} {
		bindfs(t, server, mnt, forwardLocks)
	}
	return a, b, server
}

// The waits of the kit's mounts (runTool): a stuck one fails its test,
// naming the command.
const (
	// mountTimeout bounds one mount (bindfs, mount -t glusterfs); a
	// GlusterFS client mount takes about a second when its server answers.
	mountTimeout = 2 * time.Minute
	// unmountTimeout bounds one umount attempt.
	unmountTimeout = 30 * time.Second
)

// bindfs mounts dir on mnt until the test ends.
func bindfs(t testing.TB, dir, mnt string, forwardLocks bool) {
	t.Helper()
	var args []string
	if forwardLocks {
		args = append(args, "--enable-lock-forwarding", "--multithreaded")
	}
	out, err := runTool(mountTimeout, "bindfs", append(args, dir, mnt)...)
	require.NoError(t, err, "bindfs %s: %s", mnt, out)
	t.Cleanup(func() { unmount(t, mnt) })
}

// glusterVolumeEnv names the GlusterFS volume of the kit (default
// glusterDefaultVolume); .ci/gluster.sh reads the same variable.
const (
	glusterVolumeEnv     = "JOBSTORE_GLUSTER_VOLUME"
	glusterDefaultVolume = "jobstore-kit"
)

// glusterHowTo is what a skip says to do when the volume is not served.
const glusterHowTo = "apt-get install -y glusterfs-server glusterfs-client bindfs, then, as root, bash .ci/gluster.sh start"

// glusterVolume is the kit's volume and its brick, found once per test
// binary; a non-empty skip says why the GlusterFS subtests cannot run.
var glusterVolume = sync.OnceValues(func() (v glusterVol, skip string) {
	v.name = os.Getenv(glusterVolumeEnv)
	if v.name == "" {
		v.name = glusterDefaultVolume
	}
	if _, err := exec.LookPath("mount.glusterfs"); err != nil {
		return v, "the GlusterFS client is not installed: " + glusterHowTo
	}
	// The CLI takes seconds to report a daemon that is not there.
	c, err := net.DialTimeout("tcp", "127.0.0.1:24007", time.Second)
	if err != nil {
		return v, fmt.Sprintf("glusterd is not running here (%v): %s", err, glusterHowTo)
	}
	c.Close()
	out, err := runTool(toolTimeout, "gluster", "--mode=script", "volume", "info", v.name)
	if err != nil {
		return v, fmt.Sprintf("glusterd has no volume %s (%v: %s): %s", v.name, err, strings.TrimSpace(string(out)), glusterHowTo)
	}
	started := false
	for sc := bufio.NewScanner(strings.NewReader(string(out))); sc.Scan(); {
		key, val, _ := strings.Cut(sc.Text(), ":")
		switch strings.TrimSpace(key) {
		case "Status":
			started = strings.TrimSpace(val) == "Started"
		case "Brick1": // host:/path
			_, v.brick, _ = strings.Cut(strings.TrimSpace(val), ":")
		case "Number of Bricks":
			if strings.TrimSpace(val) != "1" {
				return v, fmt.Sprintf("volume %s has %s bricks; the kit reads the truth from a one-brick volume's brick: %s", v.name, strings.TrimSpace(val), glusterHowTo)
			}
		}
	}
	if !started || v.brick == "" {
		return v, fmt.Sprintf("volume %s is not started: %s", v.name, glusterHowTo)
	}
	return v, ""
})

type glusterVol struct{ name, brick string }

// mountGlusterTwice mounts the kit's volume twice (two clients: two
// hosts) and makes a fresh directory in it for this test, removed at the
// end. With noLocks, a bindfs on each client keeps flocks local to it.
func mountGlusterTwice(t testing.TB, noLocks bool) (a, b, server string) {
	t.Helper()
	needKitRoot(t)
	v, skip := glusterVolume()
	if skip != "" {
		prereq.Skip(t, "GlusterFS", "two-host kit: "+skip)
	}
	if noLocks {
		needBindfs(t)
	}
	base := tempDir(t)
	clientA, clientB := filepath.Join(base, "clientA"), filepath.Join(base, "clientB")
	for _, mnt := range []string{clientA, clientB} {
		require.NoError(t, os.Mkdir(mnt, 0o755))
		// Client logs go to one file, not one per mount point, and only errors:
		// a warning is logged for every stale handle a reader meets.
		out, err := runTool(mountTimeout, "mount", "-t", "glusterfs", "-o", "log-level=ERROR,log-file=/var/log/glusterfs/jobstore-kit-clients.log",
			"localhost:/"+v.name, mnt)
		require.NoError(t, err, "mount -t glusterfs localhost:/%s %s: %s (bash .ci/gluster.sh status checks the volume)", v.name, mnt, out)
		t.Cleanup(func() { unmount(t, mnt) })
	}
	// Each test gets its own directory in the shared volume, named so that
	// concurrent test binaries never meet.
	sub := fmt.Sprintf("%s-%d-%d", strings.NewReplacer("/", "_").Replace(t.Name()), os.Getpid(), time.Now().UnixNano())
	require.NoError(t, os.Mkdir(filepath.Join(clientA, sub), 0o755))
	t.Cleanup(func() {
		if err := os.RemoveAll(filepath.Join(clientA, sub)); err != nil {
			t.Errorf("cannot remove the test's directory from the volume: %v", err)
		}
	})
	a, b, server = filepath.Join(clientA, sub), filepath.Join(clientB, sub), filepath.Join(v.brick, sub)
	if noLocks {
		hostA, hostB := filepath.Join(base, "hostA"), filepath.Join(base, "hostB")
		for _, m := range [][2]string{{a, hostA}, {b, hostB}} {
			require.NoError(t, os.Mkdir(m[1], 0o755))
			bindfs(t, m[0], m[1], false)
		}
		a, b = hostA, hostB
	}
	return a, b, server
}

// unmount detaches a mount, retrying while a child still holds it, lazily
// as a last resort.
func unmount(t testing.TB, mnt string) {
	t.Helper()
	var out []byte
	var err error
	for range 50 {
		if out, err = runTool(unmountTimeout, "umount", mnt); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	out2, err2 := runTool(unmountTimeout, "umount", "-l", mnt)
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

// The kit is what it says: a flock through B sees one through A exactly
// where the filesystem forwards locks, and two flocks through one mount
// always conflict.
func TestTwoHosts_KitForwardsLocksExactlyWhereItSays(t *testing.T) {
	forEachTwoHosts(t, func(t *testing.T, h *twoHosts) {
		_, ok := flockNB(t, filepath.Join(h.A, "job.lock"))
		require.True(t, ok)
		_, ok = flockNB(t, filepath.Join(h.A, "job.lock"))
		require.False(t, ok, "two flocks through one mount must conflict")
		_, ok = flockNB(t, filepath.Join(h.B, "job.lock"))
		require.Equal(t, !h.LocksForwarded, ok, "a flock through B while A holds one: got it = %v, but the kit says locks forwarded = %v", ok, h.LocksForwarded)
	})
}

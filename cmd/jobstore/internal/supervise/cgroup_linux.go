package supervise

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupPoll is how often the worker reads whether an attempt's cgroup
// still holds a process, once it has killed them.
const cgroupPoll = 10 * time.Millisecond

// attemptCgroup is the cgroup (v2) of one attempt: the job's supervisor is
// started in it (clone3's CLONE_INTO_CGROUP), so the command and every
// process it starts are in it too, whatever they do (double forks, setsid,
// a fork chain), and nothing can leave it but by a write to another
// cgroup's cgroup.procs (which takes root or a delegated cgroup). The
// worker kills them all with cgroup.kill, and knows them gone once
// cgroup.events says "populated 0": the attempt may then be retried.
type attemptCgroup struct {
	dir string
	fd  int // the open directory, for clone3
}

// newAttemptCgroup makes a cgroup for an attempt below the worker's own
// (the "0::" line of /proc/self/cgroup, under the cgroup2 mount of
// /proc/self/mountinfo). It fails where there is no cgroup v2 (a v1-only
// system), or where the worker may not make one (not root, and its cgroup
// not delegated to its user).
func newAttemptCgroup() (*attemptCgroup, error) {
	parent, err := ownCgroupDir()
	if err != nil {
		return nil, err
	}
	sweepCgroups(parent)
	var b [6]byte
	_, _ = rand.Read(b[:])
	dir := filepath.Join(parent, fmt.Sprintf("%s%d-%s", cgroupPrefix, os.Getpid(), hex.EncodeToString(b[:])))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return &attemptCgroup{dir: dir, fd: fd}, nil
}

// cgroupPrefix begins the name of an attempt's cgroup, followed by the
// worker's pid.
const cgroupPrefix = "jobstore-attempt-"

// sweepCgroups removes the empty cgroups that workers gone since (killed
// before they could remove them) left in parent. A populated one is not
// removed (rmdir refuses), nor one whose worker's pid names a process.
func sweepCgroups(parent string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), cgroupPrefix)
		pid, _, _ := strings.Cut(rest, "-")
		n, err := strconv.Atoi(pid)
		if ok && err == nil && n > 0 && errors.Is(unix.Kill(n, 0), unix.ESRCH) {
			_ = os.Remove(filepath.Join(parent, e.Name()))
		}
	}
}

// OwnCgroupDir is the directory of this process's cgroup v2 (see
// ownCgroupDir).
func OwnCgroupDir() (string, error) { return ownCgroupDir() }

// KillCgroup kills every process of the cgroup v2 dir and waits up to
// limit for them to be gone; it returns how many are still there then.
func KillCgroup(dir string, limit time.Duration) int {
	return (&attemptCgroup{dir: dir, fd: -1}).killAll(limit)
}

// ownCgroupDir is the directory of the worker's own cgroup v2.
func ownCgroupDir() (string, error) {
	mount, root, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(b)) {
		if own, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok {
			rel, err := filepath.Rel(root, own)
			if err != nil || strings.HasPrefix(rel, "..") {
				return "", fmt.Errorf("the worker's cgroup %s is outside the cgroup2 mount's root %s", own, root)
			}
			return filepath.Join(mount, rel), nil
		}
	}
	return "", errors.New("no cgroup v2 in /proc/self/cgroup")
}

// cgroup2Mount is where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup,
// or /sys/fs/cgroup/unified in a hybrid layout), and the cgroup that the
// mount shows as its root.
func cgroup2Mount() (mount, root string, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER"
		own, fs, ok := strings.Cut(sc.Text(), " - ")
		fields := strings.Fields(own)
		if !ok || len(fields) < 5 || !strings.HasPrefix(fs, "cgroup2 ") {
			continue
		}
		return unescapeMountinfo(fields[4]), unescapeMountinfo(fields[3]), nil
	}
	if err := sc.Err(); err != nil {
		return "", "", err
	}
	return "", "", errors.New("no cgroup2 file system is mounted")
}

// unescapeMountinfo undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// populated reports whether a process is still in the cgroup (or below).
// A cgroup that cannot be read counts as populated.
func (c *attemptCgroup) populated() bool {
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.events"))
	if err != nil {
		return true
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("populated ")); ok {
			return string(v) != "0"
		}
	}
	return true
}

// procs lists the pids in the cgroup.
func (c *attemptCgroup) procs() []int {
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// kill sends SIGKILL to every process of the cgroup: cgroup.kill, which
// the kernel makes race-free against forks; before Linux 5.14, which lacks
// it, each pid of cgroup.procs in turn (callers repeat it until the cgroup
// is empty).
func (c *attemptCgroup) kill() {
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0); err == nil {
		return
	}
	for _, pid := range c.procs() {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
}

// killAll kills every process of the cgroup and waits up to limit for
// them to be gone; it returns how many are still there then (a process
// blocked in the kernel dies only when it leaves it).
func (c *attemptCgroup) killAll(limit time.Duration) int {
	deadline := time.Now().Add(limit)
	for c.populated() {
		if time.Now().After(deadline) {
			return max(len(c.procs()), 1)
		}
		c.kill()
		time.Sleep(cgroupPoll)
	}
	return 0
}

// remove removes the cgroup, once empty.
func (c *attemptCgroup) remove() {
	_ = unix.Close(c.fd)
	_ = os.Remove(c.dir)
}

package flock

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axqua/jobstore/internal/testdir"
)

// childEnv makes the test binary, re-executed by startHolder, lock the file
// the variable names, say so on stdout, and hold the lock until its stdin
// closes or it is killed.
const childEnv = "FLOCK_TEST_CHILD_LOCK"

// childLocked is the line the child writes once it holds the lock.
const childLocked = "locked"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		os.Exit(holdLock(path))
	}
	os.Exit(m.Run())
}

func holdLock(path string) int {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "flock test child:", err)
		return 2
	}
	if err := Lock(f); err != nil {
		fmt.Fprintln(os.Stderr, "flock test child: Lock:", err)
		return 3
	}
	fmt.Println(childLocked)
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// startHolder starts this test binary as a child process that holds the
// lock on path, and returns once it does. The child is killed and reaped at
// the end of the test if it has not been waited for.
func startHolder(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("cannot find the test binary: %v", err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	cmd.Stderr = os.Stderr
	if _, err := cmd.StdinPipe(); err != nil { // held open: the child waits for its end
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != childLocked {
		t.Fatalf("child did not take the lock: read %q, %v", line, err)
	}
	return cmd
}

// lockFile makes a file holding content and returns its path.
func lockFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(testdir.New(t), "job.lock")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// open opens path for reading and writing, closed at the end of the test.
func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func mustLock(t *testing.T, f *os.File) {
	t.Helper()
	if err := Lock(f); err != nil {
		t.Fatalf("Lock(%s): %v", f.Name(), err)
	}
}

// mustBeHeld fails the test unless Lock(f) fails at once because another
// open of the file holds the lock.
func mustBeHeld(t *testing.T, f *os.File) {
	t.Helper()
	err := Lock(f)
	if err == nil {
		t.Fatalf("Lock(%s) succeeded while another open holds the lock", f.Name())
	}
	if !IsHeld(err) {
		t.Fatalf("Lock(%s) = %v, for which IsHeld is false", f.Name(), err)
	}
}

func TestLock_TwoOpensInOneProcessConflict(t *testing.T) {
	path := lockFile(t, "")
	a, b := open(t, path), open(t, path)
	mustLock(t, a)
	mustBeHeld(t, b)
}

func TestUnlock_FreesTheLock(t *testing.T) {
	path := lockFile(t, "")
	a, b := open(t, path), open(t, path)
	mustLock(t, a)
	if err := Unlock(a); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	mustLock(t, b)
	mustBeHeld(t, a)
}

func TestLock_DiesWithItsDescriptor(t *testing.T) {
	path := lockFile(t, "")
	a, b := open(t, path), open(t, path)
	mustLock(t, a)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	mustLock(t, b)
}

// A child process holding the lock blocks this one; killed, it releases it.
func TestLock_HeldByAnotherProcess(t *testing.T) {
	path := lockFile(t, "")
	child := startHolder(t, path)
	f := open(t, path)
	mustBeHeld(t, f)
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait() // killed: an error by design
	mustLock(t, f)
}

// The holder of job.lock writes a record at its start that the losers read:
// the lock must not keep others from the file's content. Only Windows
// enforces byte-range locks on reads and writes (Wine 8 does not), so only
// there can this test fail.
func TestLock_ContentStaysReadableAndWritable(t *testing.T) {
	const record = `{"pid":4242}` + "\n"
	path := lockFile(t, record)
	startHolder(t, path)
	got, err := os.ReadFile(path)
	if err != nil || string(got) != record {
		t.Fatalf("reading a locked file: %q, %v", got, err)
	}
	f := open(t, path)
	if _, err := f.WriteAt([]byte("{}\n"), 0); err != nil {
		t.Fatalf("writing a locked file: %v", err)
	}
}

func TestIsHeld_OnlyForAHeldLock(t *testing.T) {
	closed, err := os.Open(lockFile(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	lockErr := Lock(closed)
	if lockErr == nil {
		t.Fatal("Lock on a closed file succeeded")
	}
	for _, err := range []error{nil, lockErr, fs.ErrNotExist, errors.ErrUnsupported} {
		if IsHeld(err) {
			t.Errorf("IsHeld(%v) = true", err)
		}
	}
}

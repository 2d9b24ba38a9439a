package jobstore

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/axqua/jobstore/internal/testdir"
)

// onRemoveSeam runs fn at every step of every removal until the test ends.
func onRemoveSeam(t *testing.T, fn func(step, path string)) {
	t.Helper()
	removeSeam.Store(&fn)
	t.Cleanup(func() { removeSeam.Store(nil) })
}

// removeFromOtherHost plays a remover on a host whose job.lock does not
// reach this one: it does the work Remove does once it holds job.lock,
// under that other host's lock.
func removeFromOtherHost(dir JobDir) error {
	o, err := newStartOptions("remove", dir, nil)
	if err != nil {
		return err
	}
	jd, err := openJobDir("remove", dir)
	if err != nil {
		return err
	}
	return removeLocked("remove", jd, &Lock{dir: dir}, o)
}

// The worst interleaving of a Start and a removal on two hosts: a starter
// reads the job queued and stalls; meanwhile, on the other host, the job is
// cancelled and removed, the removal getting as far as an empty hidden
// directory (every attempt directory and status.json deleted) before it
// removes it. The starter then claims an attempt in that directory, where
// no attempt directory and no status stop it: its claim must still fail
// (ErrNotJob), since the attempt directory it made is not at its path, and
// nothing may be left behind: the removal deletes the starter's leftover
// claim with the rest.
func TestStart_ClaimInARemovedDirectoryRefuses(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("on Windows the starter's open job directory stops the rename itself")
	}
	dir := submitQueued(t)
	root := filepath.Dir(string(dir))
	emptied, release, removed := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	var once sync.Once
	var claimed []string // what the hidden directory held once the starter was done
	onRemoveSeam(t, func(step, hidden string) {
		if step == "emptied" {
			once.Do(func() {
				close(emptied)
				<-release
				claimed = dirNames(t, hidden)
			})
		}
	})
	hookRan := false
	r, err := startWith(t, dir, func(stage string) {
		if stage != "read" {
			return
		}
		hookRan = true
		if !cancelFromOtherHost(t, dir) {
			t.Errorf("the canceller did not cancel the queued job")
		}
		go func() { removed <- removeFromOtherHost(dir) }()
		<-emptied
	})
	close(release)
	if !hookRan {
		t.Fatal("the start hook never ran: the test proves nothing")
	}
	if err == nil {
		r.Close()
		t.Fatal("Start went on in a job directory that was removed meanwhile")
	}
	if !errors.Is(err, ErrNotJob) {
		t.Fatalf("Start: %v, want ErrNotJob", err)
	}
	if err := <-removed; err != nil {
		t.Fatalf("the removal failed: %v", err)
	}
	if !strings.Contains(err.Error(), "removed meanwhile") {
		t.Fatalf("Start: %v, want the removal named: the interleaving was not the one meant", err)
	}
	if len(claimed) != 0 {
		t.Fatalf("the starter left %v in the removed directory: its claim must be withdrawn", claimed)
	}
	if left := dirNames(t, root); len(left) != 0 {
		t.Fatalf("the root holds %v after the removal, want nothing", left)
	}
}

// A List reader that opened the job directory before the rename and reads
// on while it is deleted sees the job whole or not at all: removed between
// its read of job.json and its read of status.json, or before both, the
// job is left out (job.json goes first, so a missing status.json comes
// with a missing job.json); removed after both, it is whole.
func TestList_JobRemovedWhileReadIsLeftOut(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("on Windows an open job directory stops the rename")
	}
	for _, when := range []string{"before the reads", "between the reads"} {
		t.Run(when, func(t *testing.T) {
			root := testdir.New(t)
			dir, err := Submit(root, JobSpec{ID: "j", Kind: "k"})
			if err != nil {
				t.Fatal(err)
			}
			if err := RequestCancel(dir, CancelRequest{}); err != nil {
				t.Fatal(err)
			}
			jd, err := openJobDir("read", dir) // the reader's descriptor, opened before the rename
			if err != nil {
				t.Fatal(err)
			}
			defer jd.Close()
			remove := func() {
				if err := Remove(dir); err != nil {
					t.Fatal(err)
				}
			}
			if when == "before the reads" {
				remove()
			}
			e, done, gone := readEntrySpec(jd)
			if !done {
				if when == "between the reads" {
					remove()
				}
				e, gone = readEntryStatus(jd, e)
			}
			if !gone {
				t.Fatalf("List would show the removed job: spec %v, status %v, err %v", e.Spec, e.Status, e.Err)
			}
		})
	}
	root := testdir.New(t)
	dir, err := Submit(root, JobSpec{ID: "j", Kind: "k"})
	if err != nil {
		t.Fatal(err)
	}
	jd, err := openJobDir("read", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer jd.Close()
	e, done, gone := readEntrySpec(jd)
	if !done {
		e, gone = readEntryStatus(jd, e)
	}
	if gone || e.Spec == nil || e.Status == nil || e.Err != nil {
		t.Fatalf("a job in place must be read whole: %+v, gone %v", e, gone)
	}
}

// A directory inside the hidden job swapped for a link to a directory
// outside the root, after the rename and before the deletion, is removed
// as a link: its target survives.
func TestRemove_ADirectorySwappedForALinkMeanwhileIsRemovedAsALink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Wine's links are invisible to the reparse-point check (see the attempt tests)")
	}
	root, outside := testdir.New(t), testdir.New(t)
	if err := os.WriteFile(filepath.Join(outside, "precious"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, err := Submit(root, JobSpec{ID: "j", Kind: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if err := RequestCancel(dir, CancelRequest{}); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(string(dir), "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	swapped := false
	onRemoveSeam(t, func(step, hidden string) {
		if step != "hidden" {
			return
		}
		work := filepath.Join(hidden, "work")
		if err := os.Remove(work); err != nil {
			t.Errorf("remove %s: %v", work, err)
		}
		if err := os.Symlink(outside, work); err != nil {
			t.Errorf("symlink: %v", err)
		}
		swapped = true
	})
	if err := Remove(dir); err != nil {
		t.Fatal(err)
	}
	if !swapped {
		t.Fatal("the swap never happened")
	}
	if b, err := os.ReadFile(filepath.Join(outside, "precious")); err != nil || string(b) != "keep" {
		t.Fatalf("the link's target was touched: %q, %v", b, err)
	}
	if left := dirNames(t, root); len(left) != 0 {
		t.Fatalf("the root holds %v, want nothing", left)
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		if de.Name() == submitDir && de.IsDir() {
			if inner, err := os.ReadDir(filepath.Join(dir, de.Name())); err == nil && len(inner) == 0 {
				continue // where Submit builds jobs, empty: no leftover
			}
		}
		if de.Name() == LiveDir && de.IsDir() && liveIndexClean(dir) {
			continue // the live index, with no entry for a job not in dir
		}
		names = append(names, de.Name())
	}
	return names
}

// Whatever a reader that holds the job directory open (opened before the
// rename) finds at any step of the deletion, a missing status.json comes
// with a missing job.json: ReadStatus, ReadCancel and List take that for a
// job removed, never for a job that has not run yet. So job.json goes
// first and status.json last.
func TestRemove_AMissingStatusAlwaysComesWithAMissingJobJSON(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("on Windows an open job directory stops the rename")
	}
	dir, err := Submit(testdir.New(t), JobSpec{ID: "j", Kind: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if err := RequestCancel(dir, CancelRequest{}); err != nil {
		t.Fatal(err)
	}
	jd, err := openJobDir("read", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer jd.Close()
	steps := 0
	onRemoveSeam(t, func(step, path string) {
		if step != "deleted" {
			return
		}
		steps++
		st, err := ReadCancel(dir) // by path: the job is gone from there
		if err == nil || st != nil {
			t.Errorf("after deleting %s: ReadCancel by path found the job", filepath.Base(path))
		}
		status, serr := readStatusIn(jd, newReadOptions(nil), statusSchema())
		_, lerr := jd.Lstat(SpecFile)
		if serr == nil && status == nil && lerr == nil {
			t.Errorf("after deleting %s: status.json is missing while job.json is there: a reader would take the job for one that has not run", filepath.Base(path))
		}
	})
	if err := Remove(dir); err != nil {
		t.Fatal(err)
	}
	if steps < 4 { // job.json, job.lock, cancel.json, the attempt directories, status.json
		t.Fatalf("the seam saw %d deletions: the test proved nothing", steps)
	}
}

// A job directory replaced by another between Remove's claim and its
// rename (someone moved the job away and put a directory in its place) is
// not removed: Remove sees that what it renamed is not what it claimed,
// gives it its name back, and fails; both directories survive whole.
func TestRemove_AJobDirectoryReplacedMeanwhileIsPutBack(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("on Windows the claimed directory is pinned until the rename")
	}
	root := testdir.New(t)
	dir, err := Submit(root, JobSpec{ID: "j", Kind: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if err := RequestCancel(dir, CancelRequest{}); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(root, "moved-away")
	swapped := false
	onRemoveSeam(t, func(step, _ string) {
		if step != "claimed" || swapped {
			return
		}
		swapped = true
		if err := os.Rename(string(dir), moved); err != nil {
			t.Errorf("move the job away: %v", err)
		}
		if err := os.MkdirAll(filepath.Join(string(dir), "precious"), 0o755); err != nil {
			t.Errorf("mkdir: %v", err)
		}
	})
	err = Remove(dir)
	if !swapped {
		t.Fatal("the swap never happened")
	}
	if err == nil {
		t.Fatal("Remove removed a directory it had not claimed")
	}
	if _, err := os.Stat(filepath.Join(string(dir), "precious")); err != nil {
		t.Fatalf("the directory put in the job's place must be back at its name: %v", err)
	}
	if _, err := ReadSpec(JobDir(moved)); err != nil && !errors.Is(err, ErrInvalid) {
		t.Fatalf("the moved job must be whole: %v", err)
	}
	if left := dirNames(t, root); len(left) != 2 {
		t.Fatalf("the root holds %v, want the two directories and nothing hidden", left)
	}
}

// liveIndexClean reports whether every entry of root's LiveDir names a
// directory of root: no entry is left for a job removed.
func liveIndexClean(root string) bool {
	inner, err := os.ReadDir(filepath.Join(root, LiveDir))
	if err != nil {
		return false
	}
	for _, de := range inner {
		if _, err := os.Lstat(filepath.Join(root, de.Name())); err != nil {
			return false
		}
	}
	return true
}

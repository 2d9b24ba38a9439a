//go:build unix

package jobstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/renameio/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// swapDeadline only guards against a write that hangs (a FIFO opened
// without O_NONBLOCK would); it is not a speed limit.
const swapDeadline = time.Minute

// onTempSeam runs swap at the named step of the temp file's creation (see
// tempSeam), for the rest of the test, and counts the calls so that a test
// whose swap never ran cannot pass.
func onTempSeam(t *testing.T, step string, swap func(dir string)) *int {
	t.Helper()
	calls := new(int)
	f := func(s, dir string) {
		if s == step {
			*calls++
			swap(dir)
		}
	}
	tempSeam.Store(&f)
	t.Cleanup(func() { tempSeam.Store(nil) })
	return calls
}

// namesIn lists dir, sorted; nil if it does not exist.
func namesIn(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// TestCreateTemp_RenameioNamesAndCreatesTheFile: the temp file is named as
// renameio names its own (checked against a PendingFile renameio makes in
// the same directory: "." + base + the decimal form of a non-negative
// int64), IsTempName knows it, and it is a new regular file with perm less
// the umask, open for writing.
func TestCreateTemp_RenameioNamesAndCreatesTheFile(t *testing.T) {
	dir := t.TempDir()
	ref, err := renameio.NewPendingFile(filepath.Join(dir, StatusFile), renameio.WithTempDir(dir))
	require.NoError(t, err)
	refName := filepath.Base(ref.Name())
	require.NoError(t, ref.Cleanup())
	refDigits, ok := strings.CutPrefix(refName, "."+StatusFile)
	require.True(t, ok, "renameio's own temp name %q", refName)
	_, err = strconv.ParseUint(refDigits, 10, 63)
	require.NoError(t, err, "renameio's own temp name %q", refName)

	d, err := openDir(dir, true)
	require.NoError(t, err)
	defer d.close()
	seen := map[string]bool{}
	for _, name := range []string{StatusFile, SpecFile, CancelFile, "index.json"} {
		for range 20 {
			f, tmp, err := d.createTemp("", name, 0o640)
			require.NoError(t, err)
			digits, ok := strings.CutPrefix(tmp, "."+name)
			assert.True(t, ok, "%q does not start with %q as renameio's names do", tmp, "."+name)
			_, err = strconv.ParseUint(digits, 10, 63)
			assert.NoError(t, err, "%q: the suffix is not renameio's random non-negative int64", tmp)
			assert.True(t, IsTempName(tmp), "IsTempName(%q)", tmp)
			assert.False(t, seen[tmp], "%q made twice", tmp)
			seen[tmp] = true

			_, err = f.Write([]byte("x"))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			fi, err := os.Lstat(filepath.Join(dir, tmp))
			require.NoError(t, err)
			assert.True(t, fi.Mode().IsRegular())
			assert.Equal(t, fs.FileMode(0o640)&^currentUmask(), fi.Mode().Perm())
			assert.Equal(t, int64(1), fi.Size())
		}
	}
}

func currentUmask() fs.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return fs.FileMode(m)
}

// TestWriteRecord_DirectorySwappedBeforeTheTempFileIsRefused: the job
// directory is renamed away and something else put at its path after the
// protocol opened it (O_NOFOLLOW) and before the temp file's root is opened.
// The write is refused, nothing is created at the link's target, in the
// directory put there, or in the original directory, and the original
// record is intact.
func TestWriteRecord_DirectorySwappedBeforeTheTempFileIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		put  func(t *testing.T, path, outside, sibling string) // what takes the directory's place
		want error
	}{
		{"a link to a directory outside the root", func(t *testing.T, path, outside, _ string) {
			require.NoError(t, os.Symlink(outside, path))
		}, ErrNotRegular},
		{"a link to a sibling job", func(t *testing.T, path, _, sibling string) {
			require.NoError(t, os.Symlink(sibling, path))
		}, ErrNotRegular},
		{"a FIFO", func(t *testing.T, path, _, _ string) {
			require.NoError(t, unix.Mkfifo(path, 0o644))
		}, ErrNotRegular},
		{"another directory", func(t *testing.T, path, _, _ string) {
			require.NoError(t, os.Mkdir(path, 0o755))
		}, errDirReplaced},
		{"nothing", func(*testing.T, string, string, string) {}, fs.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			job, sibling := JobDir(filepath.Join(root, "job")), JobDir(filepath.Join(root, "sibling"))
			for _, j := range []JobDir{job, sibling} {
				require.NoError(t, WriteSpec(j, JobSpec{ID: j.ID(), Kind: "k"}))
				require.NoError(t, WriteStatus(j, JobStatus{State: Queued, Seq: 1}))
			}
			moved := string(job) + ".moved"
			calls := onTempSeam(t, "open root", func(dir string) {
				if dir != string(job) {
					return
				}
				require.NoError(t, os.Rename(dir, moved))
				tc.put(t, dir, outside, string(sibling))
			})
			before := map[string][]string{outside: namesIn(t, outside), string(sibling): namesIn(t, string(sibling)),
				moved: {SpecFile, StatusFile}}
			oldStatus, err := os.ReadFile(sibling.StatusPath())
			require.NoError(t, err)

			done := make(chan error, 1)
			go func() { done <- WriteStatus(job, JobStatus{State: Failed, Seq: 2}) }()
			select {
			case err = <-done:
			case <-time.After(swapDeadline):
				t.Fatal("WriteStatus hangs on what took the directory's place")
			}
			require.Equal(t, 1, *calls, "the swap ran")
			t.Log(err)
			require.ErrorIs(t, err, tc.want, "%v", err)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "create temp file", e.Op)
			assert.NotEmpty(t, e.Remedy)
			if tc.want == ErrNotRegular {
				assert.Equal(t, string(job), e.Path)
			}
			for dir, names := range before {
				assert.Equal(t, names, namesIn(t, dir), "created or removed in %s", dir)
			}
			if tc.name == "another directory" {
				assert.Empty(t, namesIn(t, string(job)), "created in the directory put in its place")
			}
			assert.Equal(t, oldStatus, mustRead(t, sibling.StatusPath()), "the sibling's record changed")
			st, err := ReadStatus(JobDir(moved))
			require.NoError(t, err)
			assert.Equal(t, uint64(1), st.Seq, "the original record changed")
		})
	}

	t.Run("a path record's directory swapped for a link is refused too", func(t *testing.T) {
		parent, outside := t.TempDir(), t.TempDir()
		dir := filepath.Join(parent, "d")
		require.NoError(t, os.Mkdir(dir, 0o755))
		calls := onTempSeam(t, "open root", func(string) {
			require.NoError(t, os.Rename(dir, dir+".moved"))
			require.NoError(t, os.Symlink(outside, dir))
		})
		err := WriteJSONAtomic(filepath.Join(dir, "index.json"), 1)
		require.Equal(t, 1, *calls, "the swap ran")
		require.ErrorIs(t, err, errDirReplaced, "%v", err)
		assert.Empty(t, namesIn(t, outside))
		assert.Empty(t, namesIn(t, dir+".moved"))
	})

	t.Run("control: the same write without a swap succeeds", func(t *testing.T) {
		job := JobDir(filepath.Join(t.TempDir(), "job"))
		require.NoError(t, WriteSpec(job, JobSpec{ID: job.ID(), Kind: "k"}))
		calls := onTempSeam(t, "open root", func(string) {})
		require.NoError(t, WriteStatus(job, JobStatus{State: Failed, Seq: 2}))
		assert.Equal(t, 1, *calls)
		assert.Equal(t, []string{SpecFile, StatusFile}, namesIn(t, string(job)))
	})
}

// TestWriteRecord_DirectorySwappedAfterTheRootIsOpenStaysInIt: a swap
// between the root's check and renameio's create (or later) changes
// nothing: the root and the descriptor hold the original directory, so the
// temp file is made, and the record published, there (now under its new
// name), and nothing is created at the link's target. A path-based create
// (renameio's WithTempDir) would put the temp file at the target.
func TestWriteRecord_DirectorySwappedAfterTheRootIsOpenStaysInIt(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	job := JobDir(filepath.Join(root, "job"))
	require.NoError(t, WriteSpec(job, JobSpec{ID: job.ID(), Kind: "k"}))
	require.NoError(t, WriteStatus(job, JobStatus{State: Queued, Seq: 1}))
	moved := string(job) + ".moved"
	calls := onTempSeam(t, "create", func(dir string) {
		require.NoError(t, os.Rename(dir, moved))
		require.NoError(t, os.Symlink(outside, dir))
	})
	require.NoError(t, WriteStatus(job, JobStatus{State: Failed, Seq: 2}))
	require.Equal(t, 1, *calls, "the swap ran")
	assert.Empty(t, namesIn(t, outside), "created at the link's target")
	assert.Equal(t, []string{SpecFile, StatusFile}, namesIn(t, moved), "a temp file left, or a record missing")
	st, err := ReadStatus(JobDir(moved))
	require.NoError(t, err)
	assert.Equal(t, uint64(2), st.Seq, "the record was published in the directory it was opened in")
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// TestCreateTemp_InASubdirectoryOfTheJob: a handle of a subdirectory opened
// with openSub gets its temp files there, and a rename from its descriptor
// to the job's publishes one; a subdirectory that is a link is refused, and
// one swapped for a link after openSub is refused at the temp file.
func TestCreateTemp_InASubdirectoryOfTheJob(t *testing.T) {
	job := filepath.Join(t.TempDir(), "job")
	require.NoError(t, os.MkdirAll(filepath.Join(job, ".run-1"), 0o755))
	d, err := openDir(job, true)
	require.NoError(t, err)
	defer d.close()

	t.Run("created in the subdirectory, published in the job", func(t *testing.T) {
		sub, err := d.openSub(".run-1")
		require.NoError(t, err)
		defer sub.close()
		f, tmp, err := sub.createTemp("", StatusFile, 0o644)
		require.NoError(t, err)
		require.True(t, IsTempName(tmp))
		require.NoError(t, writeAll(f, []byte("{}\n")))
		require.NoError(t, f.Close())
		assert.Equal(t, []string{tmp}, namesIn(t, filepath.Join(job, ".run-1")))
		require.NoError(t, unix.Renameat(sub.fd, tmp, d.fd, StatusFile))
		assert.Equal(t, []byte("{}\n"), mustRead(t, filepath.Join(job, StatusFile)))
		assert.Empty(t, namesIn(t, filepath.Join(job, ".run-1")))
	})

	t.Run("a subdirectory that is a link is refused", func(t *testing.T) {
		outside := t.TempDir()
		require.NoError(t, os.Symlink(outside, filepath.Join(job, ".run-2")))
		_, err := d.openSub(".run-2")
		var nr *notRegularError
		require.ErrorAs(t, err, &nr)
		assert.Equal(t, fs.ModeSymlink, nr.mode.Type())
		assert.Empty(t, namesIn(t, outside))
	})

	t.Run("a subdirectory swapped for a link after its open is refused", func(t *testing.T) {
		outside := t.TempDir()
		run3 := filepath.Join(job, ".run-3")
		require.NoError(t, os.Mkdir(run3, 0o755))
		sub, err := d.openSub(".run-3")
		require.NoError(t, err)
		defer sub.close()
		onTempSeam(t, "open root", func(string) {
			require.NoError(t, os.Rename(run3, run3+".moved"))
			require.NoError(t, os.Symlink(outside, run3))
		})
		_, _, err = sub.createTemp("", StatusFile, 0o644)
		var nr *notRegularError
		require.ErrorAs(t, err, &nr)
		assert.Empty(t, namesIn(t, outside))
		assert.Empty(t, namesIn(t, run3+".moved"))
	})
}

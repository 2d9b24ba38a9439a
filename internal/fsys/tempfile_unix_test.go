//go:build unix

package fsys

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

// swapDeadline only guards against a create that hangs (a FIFO opened
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
// int64), and it is a new regular file with perm less the umask, open for
// writing.
func TestCreateTemp_RenameioNamesAndCreatesTheFile(t *testing.T) {
	dir := t.TempDir()
	ref, err := renameio.NewPendingFile(filepath.Join(dir, "status.json"), renameio.WithTempDir(dir))
	require.NoError(t, err)
	refName := filepath.Base(ref.Name())
	require.NoError(t, ref.Cleanup())
	refDigits, ok := strings.CutPrefix(refName, ".status.json")
	require.True(t, ok, "renameio's own temp name %q", refName)
	_, err = strconv.ParseUint(refDigits, 10, 63)
	require.NoError(t, err, "renameio's own temp name %q", refName)

	for _, keep := range []bool{false, true} {
		t.Run("KeepRoot="+strconv.FormatBool(keep), func(t *testing.T) {
			dir := t.TempDir()
			d, err := Open(dir, true)
			require.NoError(t, err)
			defer d.Close()
			if keep {
				require.NoError(t, d.KeepRoot())
			}
			seen := map[string]bool{}
			for _, name := range []string{"status.json", "job.json", "cancel.json", "index.json"} {
				for range 20 {
					f, tmp, err := d.CreateTemp(name, 0o640)
					require.NoError(t, err)
					digits, ok := strings.CutPrefix(tmp, "."+name)
					assert.True(t, ok, "%q does not start with %q as renameio's names do", tmp, "."+name)
					_, err = strconv.ParseUint(digits, 10, 63)
					assert.NoError(t, err, "%q: the suffix is not renameio's random non-negative int64", tmp)
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
		})
	}
}

func currentUmask() fs.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return fs.FileMode(m)
}

// TestCreateTemp_DirectorySwappedBeforeTheRootIsRefused: the directory is
// renamed away and something else put at its path after it was opened
// (O_NOFOLLOW) and before the temp file's root is opened. The create is
// refused, and nothing is created at the link's target, in what was put
// there, or in the original directory. (The root is what CreateTemp uses
// where there is no heldPath: every Unix but Linux, and Linux without
// procfs; the test calls it directly to run everywhere.)
func TestCreateTemp_DirectorySwappedBeforeTheRootIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		put  func(t *testing.T, path, outside, sibling string) // what takes the directory's place
		want func(error) bool
	}{
		{"a link to a directory outside", func(t *testing.T, path, outside, _ string) {
			require.NoError(t, os.Symlink(outside, path))
		}, isNotRegular},
		{"a link to a sibling", func(t *testing.T, path, _, sibling string) {
			require.NoError(t, os.Symlink(sibling, path))
		}, isNotRegular},
		{"a FIFO", func(t *testing.T, path, _, _ string) {
			require.NoError(t, unix.Mkfifo(path, 0o644))
		}, isNotRegular},
		{"another directory", func(t *testing.T, path, _, _ string) {
			require.NoError(t, os.Mkdir(path, 0o755))
		}, func(err error) bool { return errors.Is(err, ErrDirReplaced) }},
		{"nothing", func(*testing.T, string, string, string) {}, func(err error) bool { return errors.Is(err, fs.ErrNotExist) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent, outside := t.TempDir(), t.TempDir()
			job, sibling := filepath.Join(parent, "job"), filepath.Join(parent, "sibling")
			for _, d := range []string{job, sibling} {
				require.NoError(t, os.Mkdir(d, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(d, "status.json"), []byte("1\n"), 0o644))
			}
			d, err := Open(job, true)
			require.NoError(t, err)
			defer d.Close()
			moved := job + ".moved"
			calls := onTempSeam(t, "open root", func(dir string) {
				require.NoError(t, os.Rename(dir, moved))
				tc.put(t, dir, outside, sibling)
			})
			before := map[string][]string{outside: namesIn(t, outside), sibling: namesIn(t, sibling), moved: {"status.json"}}

			done := make(chan error, 1)
			go func() {
				f, _, err := d.createTempInRoot("status.json", 0o644)
				if err == nil {
					f.Close()
				}
				done <- err
			}()
			select {
			case err = <-done:
			case <-time.After(swapDeadline):
				t.Fatal("CreateTemp hangs on what took the directory's place")
			}
			require.Equal(t, 1, *calls, "the swap ran")
			require.Error(t, err)
			require.True(t, tc.want(err), "%v", err)
			for dir, names := range before {
				assert.Equal(t, names, namesIn(t, dir), "created or removed in %s", dir)
			}
			if tc.name == "another directory" {
				assert.Empty(t, namesIn(t, job), "created in the directory put in its place")
			}
		})
	}

	t.Run("control: the same create without a swap succeeds", func(t *testing.T) {
		dir := t.TempDir()
		d, err := Open(dir, true)
		require.NoError(t, err)
		defer d.Close()
		calls := onTempSeam(t, "open root", func(string) {})
		f, tmp, err := d.createTempInRoot("status.json", 0o644)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		assert.Equal(t, 1, *calls)
		assert.Equal(t, []string{tmp}, namesIn(t, dir))
	})
}

func isNotRegular(err error) bool {
	var nr *NotRegularError
	return errors.As(err, &nr)
}

// TestCreateTemp_DirectorySwappedJustBeforeTheCreateStaysInIt: a swap just
// before renameio's create (after the root's check where a root is used)
// changes nothing: the held path or the root names the original directory,
// so the temp file is made there (now under its new name) and published
// there, and nothing is created at a link's target, in a sibling, or in
// what was put at the path. A path-based create (renameio's WithTempDir on
// d's path) would follow the link.
func TestCreateTemp_DirectorySwappedJustBeforeTheCreateStaysInIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		put  func(t *testing.T, path, outside, sibling string)
	}{
		{"a link to a directory outside", func(t *testing.T, path, outside, _ string) { require.NoError(t, os.Symlink(outside, path)) }},
		{"a link to a sibling", func(t *testing.T, path, _, sibling string) { require.NoError(t, os.Symlink(sibling, path)) }},
		{"a FIFO", func(t *testing.T, path, _, _ string) { require.NoError(t, unix.Mkfifo(path, 0o644)) }},
		{"another directory", func(t *testing.T, path, _, _ string) { require.NoError(t, os.Mkdir(path, 0o755)) }},
		{"nothing", func(*testing.T, string, string, string) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent, outside := t.TempDir(), t.TempDir()
			job, sibling := filepath.Join(parent, "job"), filepath.Join(parent, "sibling")
			require.NoError(t, os.Mkdir(job, 0o755))
			require.NoError(t, os.Mkdir(sibling, 0o755))
			d, err := Open(job, true)
			require.NoError(t, err)
			defer d.Close()
			moved := job + ".moved"
			calls := onTempSeam(t, "create", func(dir string) {
				require.NoError(t, os.Rename(dir, moved))
				tc.put(t, dir, outside, sibling)
			})
			f, tmp, err := d.CreateTemp("status.json", 0o644)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			require.Equal(t, 1, *calls, "the swap ran")
			assert.Empty(t, namesIn(t, outside), "created at the link's target")
			assert.Empty(t, namesIn(t, sibling), "created in the sibling")
			if fi, err := os.Lstat(job); err == nil && fi.IsDir() {
				assert.Empty(t, namesIn(t, job), "created in the directory put in its place")
			}
			assert.Equal(t, []string{tmp}, namesIn(t, moved))
			require.NoError(t, d.Replace(tmp, "status.json", true, 0))
			assert.Equal(t, []string{"status.json"}, namesIn(t, moved), "published in the directory it was opened in")
		})
	}
}

// TestOpenDir_SubdirectoryNeverThroughALink: a subdirectory opened with
// OpenDir gets its temp files there, and a rename from its descriptor to the
// parent's publishes one; a subdirectory that is a link is refused, and one
// swapped for a link after OpenDir is refused at the temp file.
func TestOpenDir_SubdirectoryNeverThroughALink(t *testing.T) {
	job := filepath.Join(t.TempDir(), "job")
	require.NoError(t, os.MkdirAll(filepath.Join(job, ".run-1"), 0o755))
	d, err := Open(job, true)
	require.NoError(t, err)
	defer d.Close()

	t.Run("created in the subdirectory, published in the parent", func(t *testing.T) {
		sub, err := d.OpenDir(".run-1")
		require.NoError(t, err)
		defer sub.Close()
		f, tmp, err := sub.CreateTemp("status.json", 0o644)
		require.NoError(t, err)
		_, err = f.Write([]byte("{}\n"))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		assert.Equal(t, []string{tmp}, namesIn(t, filepath.Join(job, ".run-1")))
		require.NoError(t, d.ReplaceFrom(sub, tmp, "status.json"))
		b, err := os.ReadFile(filepath.Join(job, "status.json"))
		require.NoError(t, err)
		assert.Equal(t, "{}\n", string(b))
		assert.Empty(t, namesIn(t, filepath.Join(job, ".run-1")))
	})

	t.Run("a subdirectory that is a link is refused", func(t *testing.T) {
		outside := t.TempDir()
		require.NoError(t, os.Symlink(outside, filepath.Join(job, ".run-2")))
		_, err := d.OpenDir(".run-2")
		var nr *NotRegularError
		require.ErrorAs(t, err, &nr)
		assert.Equal(t, fs.ModeSymlink, nr.Mode.Type())
		assert.Empty(t, namesIn(t, outside))
	})

	t.Run("a subdirectory swapped for a link after its open is refused by the root", func(t *testing.T) {
		outside := t.TempDir()
		run3 := filepath.Join(job, ".run-3")
		require.NoError(t, os.Mkdir(run3, 0o755))
		sub, err := d.OpenDir(".run-3")
		require.NoError(t, err)
		defer sub.Close()
		onTempSeam(t, "open root", func(string) {
			require.NoError(t, os.Rename(run3, run3+".moved"))
			require.NoError(t, os.Symlink(outside, run3))
		})
		_, _, err = sub.createTempInRoot("status.json", 0o644)
		var nr *NotRegularError
		require.ErrorAs(t, err, &nr)
		assert.Empty(t, namesIn(t, outside))
		assert.Empty(t, namesIn(t, run3+".moved"))
	})

	t.Run("a subdirectory swapped for a link just before the create keeps the temp file", func(t *testing.T) {
		outside := t.TempDir()
		run4 := filepath.Join(job, ".run-4")
		require.NoError(t, os.Mkdir(run4, 0o755))
		sub, err := d.OpenDir(".run-4")
		require.NoError(t, err)
		defer sub.Close()
		calls := onTempSeam(t, "create", func(string) {
			require.NoError(t, os.Rename(run4, run4+".moved"))
			require.NoError(t, os.Symlink(outside, run4))
		})
		f, tmp, err := sub.CreateTemp("status.json", 0o644)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		require.Equal(t, 1, *calls, "the swap ran")
		assert.Equal(t, []string{tmp}, namesIn(t, run4+".moved"), "made in the directory held")
		assert.Empty(t, namesIn(t, outside), "created at the link's target")
	})
}

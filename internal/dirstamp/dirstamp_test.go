package dirstamp_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/axqua/jobstore/internal/dirstamp"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// A stamp changes when an entry is created, replaced by a rename, or
// removed in the directory, and not when a file in it is written in place.
func TestStamp_ChangesWithTheDirectorysEntries(t *testing.T) {
	root := testdir.New(t)
	job := filepath.Join(root, "job")
	require.NoError(t, os.Mkdir(job, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(job, "inplace"), []byte("a"), 0o644))
	d, err := dirstamp.Open(root)
	require.NoError(t, err)
	defer d.Close()
	tick := func() { time.Sleep(20 * time.Millisecond) } // past the clock tick that stamps the times

	stamp := func() dirstamp.Stamp {
		t.Helper()
		s, err := d.Lstat("job")
		require.NoError(t, err)
		return s
	}
	before := stamp()
	tick()
	require.NoError(t, os.WriteFile(filepath.Join(job, "inplace"), []byte("bb"), 0o644))
	require.Equal(t, before, stamp(), "a file written in place leaves its directory's stamp")

	for _, c := range []struct {
		name   string
		change func() error
	}{
		{"created", func() error { return os.WriteFile(filepath.Join(job, "new"), nil, 0o644) }},
		{"renamed over", func() error {
			tmp := filepath.Join(job, ".tmp")
			if err := os.WriteFile(tmp, []byte("x"), 0o644); err != nil {
				return err
			}
			tick()
			b := stamp()
			if err := os.Rename(tmp, filepath.Join(job, "inplace")); err != nil {
				return err
			}
			if stamp() == b {
				return errors.New("the rename over a file left the stamp")
			}
			return nil
		}},
		{"removed", func() error { return os.Remove(filepath.Join(job, "new")) }},
	} {
		before := stamp()
		tick()
		require.NoError(t, c.change(), c.name)
		require.NotEqual(t, before, stamp(), "an entry %s changes the stamp", c.name)
	}

	rootBefore, err := d.Stamp()
	require.NoError(t, err)
	tick()
	require.NoError(t, os.Mkdir(filepath.Join(root, "other"), 0o755))
	rootAfter, err := d.Stamp()
	require.NoError(t, err)
	require.NotEqual(t, rootBefore, rootAfter, "the root's own stamp")
	names, err := d.Names()
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"job", "other"}, names)
}

func TestLstat_RefusesWhatIsNotADirectory(t *testing.T) {
	root := testdir.New(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, "file"), nil, 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(root, "dir"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "dir", "job.json"), []byte("{}"), 0o644))
	d, err := dirstamp.Open(root)
	require.NoError(t, err)
	defer d.Close()

	_, err = d.Lstat("file")
	require.ErrorIs(t, err, dirstamp.ErrNotDir)
	_, err = d.Lstat("missing")
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = d.FileStamp("dir")
	require.ErrorIs(t, err, dirstamp.ErrNotRegular)
	s, err := d.FileStamp(filepath.Join("dir", "job.json"))
	require.NoError(t, err)
	require.EqualValues(t, 2, s.Size)
	names, err := d.Names()
	require.NoError(t, err)
	require.Equal(t, []string{"dir"}, names, "only directories")

	if runtime.GOOS == "windows" {
		return // links need privileges there, and Wine's are not reparse points
	}
	require.NoError(t, os.Symlink("dir", filepath.Join(root, "link")))
	_, err = d.Lstat("link")
	require.ErrorIs(t, err, dirstamp.ErrNotDir, "a link to a directory is not followed")
	require.NoError(t, os.Symlink(filepath.Join("dir", "job.json"), filepath.Join(root, "filelink")))
	_, err = d.FileStamp("filelink")
	require.ErrorIs(t, err, dirstamp.ErrNotRegular)
	names, err = d.Names()
	require.NoError(t, err)
	require.Equal(t, []string{"dir"}, names, "a link is not listed")
}

func TestSameDir_TellsADirectoryMadeAgain(t *testing.T) {
	root := testdir.New(t)
	d, err := dirstamp.Open(root)
	require.NoError(t, err)
	defer d.Close()
	p := filepath.Join(root, "j")
	require.NoError(t, os.Mkdir(p, 0o755))
	a, err := d.Lstat("j")
	require.NoError(t, err)
	keep := filepath.Join(root, "keep") // holds a's inode number taken
	require.NoError(t, os.Rename(p, keep))
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, os.Mkdir(p, 0o755))
	b, err := d.Lstat("j")
	require.NoError(t, err)
	require.False(t, b.SameDir(a))
	require.True(t, b.SameDir(b))
}

// Entries lists every entry with its type, and LstatEntry stamps any entry
// and says what it is: a link is reported as a link, never followed.
func TestEntries_ReportEachTypeAndNeverFollowALink(t *testing.T) {
	root := testdir.New(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, "file"), nil, 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(root, "dir"), 0o755))
	want := map[string]fs.FileMode{"file": 0, "dir": fs.ModeDir}
	if runtime.GOOS != "windows" { // links need privileges there, and Wine's are not reparse points
		require.NoError(t, os.Symlink("dir", filepath.Join(root, "link")))
		want["link"] = fs.ModeSymlink
	}
	d, err := dirstamp.Open(root)
	require.NoError(t, err)
	defer d.Close()

	entries, err := d.Entries()
	require.NoError(t, err)
	got := map[string]fs.FileMode{}
	for _, e := range entries {
		got[e.Name] = e.Type
	}
	require.Equal(t, want, got)
	for name, typ := range want {
		t.Run(name, func(t *testing.T) {
			st, gotTyp, err := d.LstatEntry(name)
			require.NoError(t, err)
			require.Equal(t, typ, gotTyp)
			require.NotZero(t, st.Mtime)
			if typ == fs.ModeSymlink {
				target, err := d.Lstat("dir")
				require.NoError(t, err)
				require.False(t, st.SameDir(target), "the link's own stamp, not its target's")
			}
		})
	}
	_, _, err = d.LstatEntry("missing")
	require.ErrorIs(t, err, os.ErrNotExist)
}

package crashmodel

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/axqua/jobstore/internal/strace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStates_EnumerateWhatAPowerCutMayLeave checks the model on a
// hand-written trace: a temp file written and renamed over a record with no
// fsync at all, then the same with both fsyncs.
func TestStates_EnumerateWhatAPowerCutMayLeave(t *testing.T) {
	const root = "/r"
	ev := func(name, path, newPath string, fd int, flags, data string) strace.Event {
		return strace.Event{Call: strace.Call{Name: name, Line: name + " " + path}, Path: path, NewPath: newPath,
			FD: fd, Flags: flags, Data: []byte(data)}
	}
	base := Image{{}}
	dir := base.NewInode(true)
	rec := base.NewInode(false)
	base[dir].Entries["rec"] = rec
	base[rec].Data = []byte("old")
	replace := []strace.Event{
		ev("openat", "/r/.rec1", "", 3, "O_RDWR|O_CREAT|O_EXCL", ""),
		ev("write", "/r/.rec1", "", 3, "", "new!"),
		ev("close", "/r/.rec1", "", 3, "", ""),
		ev("renameat", "/r/.rec1", "/r/rec", -1, "", ""),
	}
	contents := func(m *Model, k int) (n int, seen []string) {
		n, err := m.States(k, func(img Image, _ string) {
			ino, ok := img.Lookup("rec")
			s := "(missing)"
			if ok {
				s = string(img[ino].Data)
			}
			if !slices.Contains(seen, s) {
				seen = append(seen, s)
			}
		})
		require.NoError(t, err)
		slices.Sort(seen)
		return n, seen
	}

	t.Run("without fsync every mix of the pending operations is reachable", func(t *testing.T) {
		m, err := Build(root, base, replace)
		require.NoError(t, err)
		require.Len(t, m.ops, 3, "create, write, rename")
		n, seen := contents(m, len(m.ops))
		assert.Equal(t, 2*4*2, n, "create lost/kept x write 4 outcomes x rename lost/kept")
		assert.Equal(t, []string{"", "\x00\x00\x00\x00", "ne", "new!", "old"}, seen)
		n, seen = contents(m, 0)
		assert.Equal(t, 1, n)
		assert.Equal(t, []string{"old"}, seen)
	})

	t.Run("with the file and directory fsynced only the new record remains", func(t *testing.T) {
		synced := slices.Insert(slices.Clone(replace), 2, ev("fsync", "/r/.rec1", "", 3, "", ""))
		synced = append(synced,
			ev("openat", "/r", "", 4, "O_RDONLY", ""),
			ev("fsync", "/r", "", 4, "", ""))
		m, err := Build(root, base, synced)
		require.NoError(t, err)
		n, seen := contents(m, len(m.ops))
		assert.Equal(t, 1, n)
		assert.Equal(t, []string{"new!"}, seen)
		_, seen = contents(m, len(m.ops)-1) // before the directory fsync
		assert.Equal(t, []string{"new!", "old"}, seen)
	})

	t.Run("a call the model cannot follow is an error, not a guess", func(t *testing.T) {
		_, err := Build(root, base, []strace.Event{ev("write", "/r/rec", "", 9, "", "x")})
		assert.ErrorContains(t, err, "fd 9 not opened")
		_, err = Build(root, base, []strace.Event{ev("renameat2", "/r/rec", "/r/x", -1, "RENAME_EXCHANGE", "")})
		assert.ErrorContains(t, err, "no rule")
	})
}

// replaceTrace is a real strace log (python3 replacing
// /tmp/sfx/root/job/status.json through an fsynced temp file, then
// fsyncing the directory; see package strace) resolved under its root, and
// the tree before it.
func replaceTrace(t *testing.T) (root string, base Image, evs []strace.Event) {
	t.Helper()
	log, err := os.ReadFile(filepath.Join("..", "strace", "testdata", "replace.log"))
	require.NoError(t, err)
	calls, err := strace.Parse(string(log))
	require.NoError(t, err)
	root = "/tmp/sfx/root"
	evs, err = strace.Resolve(calls, root)
	require.NoError(t, err)
	base = Image{{}}
	require.Equal(t, Root, base.NewInode(true))
	job, rec := base.NewInode(true), base.NewInode(false)
	base[Root].Entries["job"] = job
	base[job].Entries["status.json"] = rec
	base[rec].Data = []byte("{\"old\":1}\n")
	return root, base, evs
}

// TestCheck_FindsBadStatesOnlyWhenASyncIsMissing runs Check over the real
// trace: as traced, no state a power cut may leave holds anything but the
// old or the new record (and the new one once acknowledged); without the
// file fsync, or without the directory fsync, some state does.
func TestCheck_FindsBadStatesOnlyWhenASyncIsMissing(t *testing.T) {
	root, base, evs := replaceTrace(t)
	newB := []byte("{\"state\": \"running\",\n \"msg\": \"a, \\\"b\\\" (c)\\t\xff\"}\n")
	check := func(dir string, acked bool) []string {
		b, err := os.ReadFile(filepath.Join(dir, "job", "status.json"))
		switch {
		case err != nil:
			return []string{err.Error()}
		case string(b) == string(newB):
			return nil
		case string(b) == "{\"old\":1}\n" && !acked:
			return nil
		default:
			return []string{"status.json: " + strconv.Quote(string(b))}
		}
	}
	isFsync := func(path string) func(e strace.Event) bool {
		return func(e strace.Event) bool { return e.Name == "fsync" && e.Path == path }
	}
	for _, tc := range []struct {
		name    string
		drop    func(strace.Event) bool
		wantBad []string // a violation that must be among those found
	}{
		{name: "as traced"},
		{name: "without the file fsync", drop: isFsync(root + "/job/.status.json123"),
			wantBad: []string{`status.json: ""`, `status.json: "\x00\x00`}},
		{name: "without the directory fsync", drop: isFsync(root + "/job"),
			wantBad: []string{`acknowledged: true`, `status.json: "{\"old\":1}\n"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := evs
			if tc.drop != nil {
				evs = slices.DeleteFunc(slices.Clone(evs), tc.drop)
				require.Len(t, evs, 7, "exactly one call dropped")
			}
			m, err := Build(root, base, evs)
			require.NoError(t, err)
			r, err := m.Check(t.TempDir(), check)
			require.NoError(t, err)
			assert.Equal(t, len(m.Ops()), r.Ops)
			assert.Greater(t, r.Checked, 1)
			assert.GreaterOrEqual(t, r.Enumerated, r.Checked)
			if tc.wantBad == nil {
				assert.Empty(t, r.Violations)
				return
			}
			require.NotEmpty(t, r.Violations)
			for _, want := range tc.wantBad {
				assert.True(t, slices.ContainsFunc(r.Violations, func(v string) bool { return strings.Contains(v, want) }),
					"no violation mentions %s:\n%s", want, strings.Join(r.Violations, "\n"))
			}
		})
	}
}

// TestSnapshot_MaterializeRoundTrips: a tree read into an image and written
// back out reads in again as the same image; a symbolic link, which the
// model does not know, is an error.
func TestSnapshot_MaterializeRoundTrips(t *testing.T) {
	src := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(src, "a", "b"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "a", "b", "f"), []byte("data\x00"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "g"), nil, 0o644))
	img, err := Snapshot(src)
	require.NoError(t, err)
	assert.Equal(t, "./\n./a/\n./a/b/\n./a/b/f \"data\\x00\"\n./g \"\"\n", img.Render())
	ino, ok := img.Lookup("a/b/f")
	require.True(t, ok)
	assert.Equal(t, "data\x00", string(img[ino].Data))
	_, ok = img.Lookup("a/x")
	assert.False(t, ok)

	dst := t.TempDir()
	require.NoError(t, img.Materialize(dst))
	again, err := Snapshot(dst)
	require.NoError(t, err)
	assert.Equal(t, img.Render(), again.Render())

	require.NoError(t, os.Symlink("g", filepath.Join(src, "link")))
	_, err = Snapshot(src)
	assert.ErrorContains(t, err, "knows files and directories")
}

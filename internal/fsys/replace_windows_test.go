package fsys

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

// These tests drive the Windows primitives through sysCalls, answering
// MoveFileEx, the POSIX-semantics rename and the reader's open with the
// errors that real Windows gives and Wine cannot be made to give.

// replaceFixture is a directory with a target "status.json" holding "old"
// and a temp file holding "new", ready to be renamed over it.
type replaceFixture struct {
	d           *Dir
	tmp, target string

	moves, posixes atomic.Int32
}

func newReplaceFixture(t *testing.T) *replaceFixture {
	t.Helper()
	dir := testdir.New(t)
	f := &replaceFixture{d: &Dir{path: dir, sys: &sysCalls{}}, tmp: ".status.json1", target: "status.json"}
	require.NoError(t, os.WriteFile(filepath.Join(dir, f.target), []byte("old"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, f.tmp), []byte("new"), 0o644))
	return f
}

// moveAnswers makes MoveFileEx answer with errs, one per call, then do the
// real rename.
func (f *replaceFixture) moveAnswers(errs ...error) {
	f.d.sys.moveFileEx = func(from, to *uint16, flags uint32) error {
		if n := int(f.moves.Add(1)); n <= len(errs) {
			return errs[n-1]
		}
		return windows.MoveFileEx(from, to, flags)
	}
}

// moveAlways makes every MoveFileEx call fail with err.
func (f *replaceFixture) moveAlways(err error) {
	f.d.sys.moveFileEx = func(*uint16, *uint16, uint32) error {
		f.moves.Add(1)
		return err
	}
}

// posixAnswers makes the POSIX rename fail with err (nil: do the rename, as
// NTFS would, with MoveFileEx standing in for it).
func (f *replaceFixture) posixAnswers(err error) {
	f.d.sys.renamePOSIX = func(from, to string) error {
		f.posixes.Add(1)
		if err != nil {
			return err
		}
		return os.Rename(from, to)
	}
}

func (f *replaceFixture) content(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(f.d.Join(f.target))
	require.NoError(t, err)
	return string(b)
}

func TestReplace_POSIXFallbackOnExactlyAccessDeniedAndSharingViolation(t *testing.T) {
	tests := []struct {
		name       string
		moveErr    error
		wantPOSIX  int32 // POSIX renames tried
		wantMoves  int32 // MoveFileEx calls
		wantResult error // nil: the replace went through
	}{
		{"access denied", windows.ERROR_ACCESS_DENIED, 1, 2, nil},
		{"sharing violation", windows.ERROR_SHARING_VIOLATION, 1, 2, nil},
		{"lock violation is retried without it", windows.ERROR_LOCK_VIOLATION, 0, 2, nil},
		{"not found is not retried", windows.ERROR_FILE_NOT_FOUND, 0, 1, windows.ERROR_FILE_NOT_FOUND},
		{"disk full is not retried", windows.ERROR_DISK_FULL, 0, 1, windows.ERROR_DISK_FULL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newReplaceFixture(t)
			f.moveAnswers(tt.moveErr)
			f.posixAnswers(windows.ERROR_INVALID_PARAMETER) // as Wine 8 answers
			err := f.d.Replace(f.tmp, f.target, true, time.Minute)
			assert.Equal(t, tt.wantPOSIX, f.posixes.Load(), "POSIX renames tried")
			assert.Equal(t, tt.wantMoves, f.moves.Load(), "MoveFileEx calls")
			if tt.wantResult != nil {
				require.ErrorIs(t, err, tt.wantResult)
				assert.Equal(t, "old", f.content(t))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "new", f.content(t))
		})
	}
}

func TestReplace_POSIXRenameThatWorksEndsTheReplace(t *testing.T) {
	f := newReplaceFixture(t)
	f.moveAlways(windows.ERROR_ACCESS_DENIED) // a reader sharing delete: MoveFileEx refuses, POSIX semantics do not
	f.posixAnswers(nil)
	require.NoError(t, f.d.Replace(f.tmp, f.target, true, time.Minute))
	assert.Equal(t, int32(1), f.moves.Load())
	assert.Equal(t, int32(1), f.posixes.Load())
	assert.Equal(t, "new", f.content(t))
	_, err := os.Lstat(f.d.Join(f.tmp))
	assert.ErrorIs(t, err, fs.ErrNotExist, "the temp name is gone")
}

func TestReplace_UnsupportedPOSIXIsAskedOncePerReplace(t *testing.T) {
	for _, unsupported := range []error{windows.ERROR_INVALID_PARAMETER, windows.ERROR_NOT_SUPPORTED, windows.ERROR_INVALID_FUNCTION} {
		t.Run(unsupported.Error(), func(t *testing.T) {
			f := newReplaceFixture(t)
			busy := windows.ERROR_SHARING_VIOLATION
			f.moveAnswers(busy, busy, busy, busy)
			f.posixAnswers(unsupported)
			require.NoError(t, f.d.Replace(f.tmp, f.target, true, time.Minute), "the retry loop goes on")
			assert.Equal(t, int32(5), f.moves.Load())
			assert.Equal(t, int32(1), f.posixes.Load(), "an unsupported POSIX rename is not asked again in the same replace")
			assert.Equal(t, "new", f.content(t))

			// Nothing is remembered beyond the call: another volume may have it.
			require.NoError(t, os.WriteFile(f.d.Join(f.tmp), []byte("newer"), 0o644))
			f.moves.Store(0)
			f.posixes.Store(0)
			require.NoError(t, f.d.Replace(f.tmp, f.target, true, time.Minute))
			assert.Equal(t, int32(1), f.posixes.Load(), "the next replace asks again")
		})
	}
}

func TestReplace_POSIXRenameBlockedByAReaderIsTriedAgain(t *testing.T) {
	f := newReplaceFixture(t)
	busy := windows.ERROR_ACCESS_DENIED
	f.moveAnswers(busy, busy, busy)
	f.posixAnswers(windows.ERROR_SHARING_VIOLATION) // a handle without FILE_SHARE_DELETE
	require.NoError(t, f.d.Replace(f.tmp, f.target, true, time.Minute))
	assert.Equal(t, int32(4), f.moves.Load())
	assert.Equal(t, int32(3), f.posixes.Load(), "both are tried on every round while the reader holds the file")
}

func TestReplace_POSIXRenameFailingOtherwiseIsTheError(t *testing.T) {
	f := newReplaceFixture(t)
	f.moveAlways(windows.ERROR_ACCESS_DENIED)
	f.posixAnswers(windows.ERROR_DISK_FULL)
	err := f.d.Replace(f.tmp, f.target, true, time.Minute)
	require.ErrorIs(t, err, windows.ERROR_DISK_FULL)
	assert.Equal(t, int32(1), f.moves.Load())
	assert.Equal(t, "old", f.content(t))
}

func TestReplace_ReadOnlyTargetIsNeitherRetriedNorRenamedPOSIX(t *testing.T) {
	f := newReplaceFixture(t)
	require.NoError(t, os.Chmod(f.d.Join(f.target), 0o444))
	t.Cleanup(func() { _ = os.Chmod(f.d.Join(f.target), 0o644) })
	f.moveAlways(windows.ERROR_ACCESS_DENIED) // what Windows answers for a read-only target (Wine replaces it)
	f.posixAnswers(nil)
	err := f.d.Replace(f.tmp, f.target, true, time.Minute)
	require.ErrorIs(t, err, windows.ERROR_ACCESS_DENIED)
	assert.Equal(t, int32(1), f.moves.Load())
	assert.Zero(t, f.posixes.Load(), "a read-only target must not be replaced by the POSIX rename")
	assert.Equal(t, "old", f.content(t))
}

func TestPublishNew_NeverUsesThePOSIXRename(t *testing.T) {
	f := newReplaceFixture(t)
	require.NoError(t, os.Remove(f.d.Join(f.target)))
	f.moveAnswers(windows.ERROR_ACCESS_DENIED)
	f.posixAnswers(nil)
	_, err := f.d.PublishNew(f.tmp, f.target, true)
	require.NoError(t, err)
	assert.Zero(t, f.posixes.Load(), "the POSIX rename replaces; job.json is published only where its name is free")
	assert.Equal(t, "new", f.content(t))
}

func TestReplace_TimeoutBoundsTheRetries(t *testing.T) {
	t.Run("0 tries once", func(t *testing.T) {
		f := newReplaceFixture(t)
		f.moveAlways(windows.ERROR_SHARING_VIOLATION)
		f.posixAnswers(windows.ERROR_INVALID_PARAMETER)
		err := f.d.Replace(f.tmp, f.target, true, 0)
		require.ErrorIs(t, err, windows.ERROR_SHARING_VIOLATION)
		assert.Equal(t, int32(1), f.moves.Load())
		assert.Equal(t, int32(1), f.posixes.Load())
	})
	t.Run("keeps trying until the timeout", func(t *testing.T) {
		const timeout = 300 * time.Millisecond
		f := newReplaceFixture(t)
		f.moveAlways(windows.ERROR_SHARING_VIOLATION)
		f.posixAnswers(windows.ERROR_INVALID_PARAMETER)
		start := time.Now()
		err := f.d.Replace(f.tmp, f.target, true, timeout)
		waited := time.Since(start)
		require.ErrorIs(t, err, windows.ERROR_SHARING_VIOLATION)
		assert.GreaterOrEqual(t, waited, timeout*3/4, "gave up before the timeout")
		assert.Greater(t, f.moves.Load(), int32(2))
		assert.Equal(t, "old", f.content(t))
	})
}

// TestRenamePOSIX_OnThisSystem: under Wine 8 the POSIX-semantics rename is
// ERROR_INVALID_PARAMETER, so only the fallback runs there; on Windows it
// replaces the target on NTFS, and is refused as unsupported elsewhere.
func TestRenamePOSIX_OnThisSystem(t *testing.T) {
	f := newReplaceFixture(t)
	err := renamePOSIX(f.d.Join(f.tmp), f.d.Join(f.target))
	if testdir.UnderWine() {
		require.ErrorIs(t, err, windows.ERROR_INVALID_PARAMETER, "Wine 8 has no POSIX-semantics rename")
		assert.True(t, unsupportedRename(err))
		assert.Equal(t, "old", f.content(t))
		_, serr := os.Lstat(f.d.Join(f.tmp))
		assert.NoError(t, serr, "a refused rename leaves the temp file")
		return
	}
	if unsupportedRename(err) {
		t.Skipf("this volume has no POSIX-semantics rename (%v); the fallback tests cover that answer", err)
	}
	require.NoError(t, err)
	assert.Equal(t, "new", f.content(t))
}

// TestOpenRecord_SharesDelete: while one of our readers has status.json
// open, the file can still be opened for DELETE (which Windows allows only
// when every open handle shares delete), so a replace is never blocked by
// it.
func TestOpenRecord_SharesDelete(t *testing.T) {
	f := newReplaceFixture(t)
	openForDelete := func() error {
		p, err := windows.UTF16PtrFromString(f.d.Join(f.target))
		require.NoError(t, err)
		h, err := windows.CreateFile(p, windows.DELETE, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
			nil, windows.OPEN_EXISTING, 0, 0)
		if err == nil {
			_ = windows.CloseHandle(h)
		}
		return err
	}

	r, err := (&Dir{path: f.d.path}).OpenRecord(f.target)
	require.NoError(t, err)
	assert.NoError(t, openForDelete(), "our reader's handle must share delete")
	// What a plain MoveFileEx makes of it depends on the system: a classic
	// rename (Wine 8, older Windows) still refuses to replace an open file.
	from, err := windows.UTF16PtrFromString(f.d.Join(f.tmp))
	require.NoError(t, err)
	to, err := windows.UTF16PtrFromString(f.d.Join(f.target))
	require.NoError(t, err)
	t.Logf("MoveFileEx(REPLACE_EXISTING) over a file our reader holds: %v", windows.MoveFileEx(from, to, windows.MOVEFILE_REPLACE_EXISTING))
	require.NoError(t, r.Close())

	held, err := os.Open(f.d.Join(f.target))
	require.NoError(t, err)
	defer held.Close()
	assert.True(t, errors.Is(openForDelete(), windows.ERROR_SHARING_VIOLATION),
		"precondition: os.Open's handle does not share delete, and blocks the DELETE open")
}

// notFoundStatus makes the first n opens of status.json fail with
// ERROR_FILE_NOT_FOUND, as a reader racing a replace on NTFS can see, and
// counts the opens.
func notFoundStatus(d *Dir, n int32, opens *atomic.Int32) {
	d.sys = &sysCalls{openFile: func(path string, access, share, disposition uint32) (*os.File, error) {
		if filepath.Base(path) == "status.json" && opens.Add(1) <= n {
			return nil, &fs.PathError{Op: "open", Path: path, Err: windows.ERROR_FILE_NOT_FOUND}
		}
		return openNoFollow(path, access, share, disposition)
	}}
}

func TestOpenRecordHidden_NotFoundDuringAReplaceIsOpenedAgain(t *testing.T) {
	newDir := func(t *testing.T, witness bool) *Dir {
		t.Helper()
		dir := testdir.New(t)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "status.json"), []byte("9"), 0o644))
		if witness {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "job.json"), []byte("{}"), 0o644))
		}
		return &Dir{path: dir}
	}
	open := func(t *testing.T, d *Dir) (string, error) {
		t.Helper()
		f, err := d.OpenRecordHidden("status.json", "job.json")
		if err != nil {
			return "", err
		}
		defer f.Close()
		b := make([]byte, 8)
		n, _ := f.Read(b)
		return string(b[:n]), nil
	}

	t.Run("a short gap is bridged", func(t *testing.T) {
		d := newDir(t, true)
		var opens atomic.Int32
		notFoundStatus(d, hiddenRetries, &opens)
		got, err := open(t, d)
		require.NoError(t, err, "status.json was missing for a moment only")
		assert.Equal(t, "9", got)
		assert.Equal(t, int32(hiddenRetries+1), opens.Load())
	})
	t.Run("a lasting absence is absent, after a bounded few opens", func(t *testing.T) {
		d := newDir(t, true)
		var opens atomic.Int32
		notFoundStatus(d, 1<<30, &opens)
		_, err := open(t, d)
		assert.ErrorIs(t, err, fs.ErrNotExist)
		assert.Equal(t, int32(hiddenRetries+1), opens.Load())
	})
	t.Run("without the witness it is not retried", func(t *testing.T) {
		d := newDir(t, false)
		var opens atomic.Int32
		notFoundStatus(d, 1<<30, &opens)
		_, err := open(t, d)
		assert.ErrorIs(t, err, fs.ErrNotExist)
		assert.Equal(t, int32(1), opens.Load())
	})
	t.Run("OpenRecord itself never retries", func(t *testing.T) {
		d := newDir(t, true)
		var opens atomic.Int32
		notFoundStatus(d, 1<<30, &opens)
		_, err := d.OpenRecord("status.json")
		assert.ErrorIs(t, err, fs.ErrNotExist)
		assert.Equal(t, int32(1), opens.Load())
	})
}

package attempt

import (
	"errors"
	"io/fs"

	"github.com/axqua/jobstore/internal/fsys"
)

// Fence ends attempt n for everyone and elects one taker: it renames .run-n
// to .fenced-n (never replacing an existing .fenced-n) and fsyncs the job
// directory, then creates .fenced-n/fenced-by exclusively (O_EXCL;
// CREATE_NEW on Windows) and writes by into it. Exactly one caller on any
// host gets won: the exclusive create decides, not the rename, because a
// rename is not a test-and-set everywhere (Windows renames an open handle,
// and a second fencer whose handle was opened before the first rename
// "renames" the directory onto its own new name and succeeds). Deciding by
// the marker also lets another fencer take over when the one that renamed
// crashed before creating it. The losers must stand down: someone else is
// taking over. An attempt never claimed (neither directory) is won by
// nobody.
//
// Every step is relative to the job directory's descriptor: .fenced-n is
// opened without following a link, so a link planted there fails the fence
// (a *fsys.NotRegularError) and nothing is created outside the job.
func Fence(job *fsys.Dir, n uint64, by string) (won bool, err error) {
	err = job.RenameDirNoReplace(RunName(n), FencedName(n))
	switch {
	case err == nil:
		if err := job.Sync(); err != nil {
			return false, err
		}
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrExist), fsys.IsDirNotEmpty(err):
		// Another fencer or the owner's release renamed it, or a claimant
		// revived .run-n for an instant: the marker decides below.
	default:
		return false, err
	}
	fenced, err := job.OpenDir(FencedName(n))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // never claimed
	}
	if err != nil {
		return false, err
	}
	defer fenced.Close()
	f, err := fenced.CreateExcl(FenceMarker, 0o644)
	switch {
	case errors.Is(err, fs.ErrExist), errors.Is(err, fs.ErrNotExist):
		return false, nil // taken by another fencer, or the directory went
	case err != nil:
		return false, err
	}
	// For people only: the create decided, so a failure to say by whom
	// (a full disk) does not undo the win.
	_, _ = f.Write([]byte(by + "\n"))
	_ = f.Close()
	return true, nil
}

package jobstore

import (
	"errors"
	"hash/maphash"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"time"

	"github.com/axqua/jobstore/internal/dirstamp"
	"github.com/axqua/jobstore/internal/fsys"
)

// LiveDir is the directory under a root that indexes its live jobs: it
// holds an empty directory named for each job that has not ended (queued,
// waiting for a retry or its not_before, running, or not yet complete). It
// lets a worker find what it may start, and the running jobs it may have to
// rescue, by reading a directory of the live jobs instead of every job a
// root keeps. Like every hidden name under a root it is not a job: List,
// WatchRoot, check and prune pass it over.
//
// The job directories stay the truth; an entry is a hint:
//   - Submit (and WriteSpec making a job) adds the job's entry once the job
//     is in place, Retry once it has written the job queued again; a
//     writer that makes none (a crash between the two steps, a writer in
//     another language that skips it) leaves the job to a worker's full
//     scan of the root, which adds the missing entry: a job with no entry
//     is found by events at once on the host that made it, and within
//     RepairInterval plus a scan interval by workers elsewhere.
//   - Finish removes its job's entry once it has written the job ended,
//     then reads the status again and adds the entry back if the job is
//     live again (a Retry meanwhile); a worker that finds a job ended (or
//     gone) with its entry left (a runner that skips this step) does the
//     same. Remove and Prune remove the entry of the jobs they remove.
//
// An entry that is missing or stale never makes a job start twice or start
// when it should not: every start goes through Start's claim.
const LiveDir = ".live"

// RepairInterval is how often a worker (a Worker, or StartNext on a root it
// keeps a view of) reads every job directory of its root, to index the
// live jobs that have no entry in LiveDir. Its first look at a root does
// so too. It is long because every writer of this package (and of the
// Python module) keeps LiveDir: the scan only rescues a job written
// without its entry (a crash between the two steps, an older writer),
// and what an idle worker costs between scans grows with the live jobs,
// not with the jobs its root keeps.
const RepairInterval = 15 * time.Minute

// markLive adds the entry of the job id to the root rd's LiveDir, making
// LiveDir if it is missing. It is a hint (see LiveDir): it reports no
// error, and a failure only leaves the job to the next full scan.
func markLive(rd *fsys.Dir, id string) {
	ld, err := rd.OpenDir(LiveDir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := rd.Mkdir(LiveDir, dirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
			return
		}
		ld, err = rd.OpenDir(LiveDir)
	}
	if err != nil {
		return
	}
	defer ld.Close()
	if err := ld.Mkdir(id, dirPerm); errors.Is(err, fs.ErrExist) {
		// Left by a job of the same name: made again, so that LiveDir
		// changes and a view reads the job under the name again. Made
		// beside it and renamed over it where a rename replaces an empty
		// directory, so that it gets another inode than the old one (a
		// view that polls LiveDir tells a remade entry by its inode);
		// elsewhere removed and made again.
		tmp := "." + id + ".new-" + strconv.FormatUint(rand.Uint64(), 36)
		if ld.Mkdir(tmp, dirPerm) == nil {
			if ld.Replace(tmp, id, false, 0) == nil {
				return
			}
			_ = ld.RemoveDir(tmp)
		}
		_ = ld.RemoveDir(id)
		_ = ld.Mkdir(id, dirPerm)
	}
}

// markLiveIn is markLive for the root of dir.
func markLiveIn(dir JobDir) { inRootOf(dir, func(rd *fsys.Dir) { markLive(rd, dir.ID()) }) }

// inRootOf calls f with the root of dir opened, unless it cannot be opened.
func inRootOf(dir JobDir, f func(rd *fsys.Dir)) {
	rd, err := openDirAt("index live job", recordAt{dir: filepath.Dir(string(dir))})
	if err != nil {
		return
	}
	defer rd.Close()
	f(rd)
}

// unmarkLive removes the entry of the job id from the root rd's LiveDir, if
// there is one.
func unmarkLive(rd *fsys.Dir, id string) {
	ld, err := rd.OpenDir(LiveDir)
	if err != nil {
		return
	}
	defer ld.Close()
	_ = ld.RemoveDir(id)
}

// stampSeed seeds stampHash: one per process, never exposed.
var stampSeed = maphash.MakeSeed()

// stampHash is what a view keeps of an ended job's directory between full
// scans: a hash of its stamp, 8 bytes instead of the stamp's 40. Equal
// stamps hash equal; a change of the directory changes the hash but for a
// chance of 2⁻⁶⁴, which would leave the job unread until it changes again.
func stampHash(s dirstamp.Stamp) uint64 { return maphash.Comparable(stampSeed, s) }

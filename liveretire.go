package jobstore

import (
	"errors"

	"github.com/axqua/jobstore/internal/fsys"
)

// retire removes the entry of dir, a job that has just ended (Finish) or
// that a view saw ended or gone, then reads the job again and adds the
// entry back if the job is live after all: a Retry (or a Submit under the
// name) that wrote it live and added its entry before the removal would
// otherwise lose it. A hint, as markLive: a failure leaves the entry to the
// next view that sees the job ended.
func retire(dir JobDir) {
	inRootOf(dir, func(rd *fsys.Dir) {
		unmarkLive(rd, dir.ID())
		if endedStill(dir) {
			return
		}
		if je, gone := readEntry(dir); !gone && !errors.Is(je.Err, ErrNotJob) && (je.Status == nil || !je.Status.State.Terminal()) {
			markLive(rd, dir.ID())
		}
	})
}

// endedStill reports whether the status.json of the job at dir's path, read
// again, says the job ended: it then needs no entry whatever its job.json
// says, and job.json is not read (the common case, a Finish that no Retry
// followed). Anything else (no status, a status that cannot be read, a live
// one) is false, and retire reads the whole job.
func endedStill(dir JobDir) bool {
	d, err := openJobDirToRead("read status", dir)
	if err != nil {
		return false
	}
	defer d.Close()
	st, err := readStatusIn(d, newReadOptions(nil), statusSchema())
	return err == nil && st != nil && st.State.Terminal()
}

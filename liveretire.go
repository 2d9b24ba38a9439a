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
		if je, gone := readEntry(dir); !gone && !errors.Is(je.Err, ErrNotJob) && (je.Status == nil || !je.Status.State.Terminal()) {
			markLive(rd, dir.ID())
		}
	})
}

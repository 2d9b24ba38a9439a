package jobview

import (
	"errors"
	"sort"
	"time"

	"github.com/axqua/jobstore"
)

// WatchedJob is one row of the table as last learned.
type WatchedJob struct {
	Dir    jobstore.JobDir
	Spec   *jobstore.JobSpec
	Status *jobstore.JobStatus
	Err    error
	// cancel and cancelInfo: its cancel request, as ReadCancel tells it.
	Cancel     *jobstore.CancelRequest
	CancelInfo RecordInfo
	Line       string    // last change line printed (plain output)
	Since      time.Time // unborn: when it was first seen without job.json
}

// Entry is the row as the table prints it.
func (j *WatchedJob) Entry() jobstore.Entry {
	return jobstore.Entry{Dir: j.Dir, Spec: j.Spec, Status: j.Status, Err: j.Err}
}

// JobFromUpdate is the job of u as list shows it (see listWatcher.row);
// prev, if not nil, is the row it replaces.
func JobFromUpdate(u jobstore.RootUpdate, prev *WatchedJob) *WatchedJob {
	j := &WatchedJob{Dir: u.Dir, Spec: u.Spec, Status: u.Status, Err: u.Err, Cancel: u.Cancel}
	if prev != nil {
		j.Line = prev.Line
	}
	j.CancelInfo = RecordInfo{File: jobstore.CancelFile, Present: u.Cancel != nil, Current: jobstore.CancelSchemaVersion}
	var e *jobstore.Error
	if errors.As(u.Err, &e) && e.Path == u.Dir.CancelPath() {
		j.Err, j.CancelInfo.Present, j.CancelInfo.Err = nil, true, u.Err
	}
	return j
}

// IsLinkEntry reports whether u is about an entry of ROOT that is a
// symbolic link (WatchRoot reports one, ErrNotRegular naming it): list
// skips it, as List does, with or without --watch.
func IsLinkEntry(u jobstore.RootUpdate) bool {
	var e *jobstore.Error
	return errors.Is(u.Err, jobstore.ErrNotRegular) && errors.As(u.Err, &e) && e.Path == string(u.Dir)
}

// SortEntries puts entries in List's order: by submission, then ID; those
// without a spec last, by ID.
func SortEntries(out []jobstore.Entry) {
	sort.Slice(out, func(a, b int) bool {
		x, y := out[a], out[b]
		if (x.Spec == nil) != (y.Spec == nil) {
			return x.Spec != nil
		}
		if x.Spec != nil && !x.Spec.SubmittedAt.Equal(y.Spec.SubmittedAt) {
			return x.Spec.SubmittedAt.Before(y.Spec.SubmittedAt)
		}
		return x.Dir.ID() < y.Dir.ID()
	})
}

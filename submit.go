package jobstore

// Submit creates a job under root, whole or not at all: it gives spec an
// ID from NewJobID when spec.ID is empty, creates root if missing
// (durably), and makes the job directory holding job.json (as WriteSpec
// stamps and validates it, read-only) and the first status.json (queued,
// seq 1). A reader, List and Reconcile see the job with both records or
// not at all. If Submit returns nil, the job is durable; if it returns an
// error, there is no job of that ID made by this call, except when only
// root's fsync failed (the error says so). A Submit killed at any instant
// leaves at most a hidden directory, removed once older than
// DefaultSweepAge.
//
// An ID that is taken (a job, a directory that is not empty or a file at
// root/ID) is an *Error of kind ErrExists (which matches fs.ErrExist), and
// nothing is changed; of several Submits of one ID exactly one makes the
// job. An empty directory at root/ID is replaced; a symbolic link there is
// ErrNotRegular, never followed nor replaced. Invalid input is ErrInvalid
// before anything is touched. How a job is built: docs/mechanisms.md#submit.
func Submit(root string, spec JobSpec) (JobDir, error) {
	const op = "submit"
	if spec.ID == "" {
		spec.ID = NewJobID()
	}
	dir, err := dirFor(op, root, spec.ID)
	if err != nil {
		return "", err
	}
	specData, err := encodeSpec(op, dir, spec)
	if err != nil {
		return "", err
	}
	statusData, err := encodeStatus(op, dir, &JobStatus{State: Queued, Seq: 1})
	if err != nil {
		return "", err
	}
	o := newWriteOptions(nil)
	recs := []builtRecord{{SpecFile, specData, o.writeOnce(), createOnly}, {StatusFile, statusData, o, replaceTarget}}
	if err := createJob(op, dir, recs, false); err != nil {
		return "", err
	}
	return dir, nil
}

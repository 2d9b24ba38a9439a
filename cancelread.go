package jobstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/axqua/jobstore/internal/fsys"
)

// cancel.json read: ReadCancel, and the request a job has (findCancel),
// as every operation that a request changes looks for it.

// ReadCancel reads cancel.json from dir with the tolerant reader (see
// ReadJSONTolerant; same retries and size limit as ReadStatus), then
// migration in memory and validation, as ReadStatus does for status.json.
//
// It returns nil, nil when the job has no cancel request, and an *Error of
// kind ErrNotJob when dir has no job.json. A request whose job_id is not
// dir's is ErrInvalid (Subject "job_id"). It never writes anything.
func ReadCancel(dir JobDir) (*CancelRequest, error) {
	dir = dir.clean()
	d, err := openJobDir("read cancel request", dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return readCancelChecked(d)
}

// readCancelChecked is ReadCancel in the job directory d.
func readCancelChecked(d *fsys.Dir) (*CancelRequest, error) {
	dir := jobDir(d)
	const op = "read cancel request"
	c, err := readCancelIn(d, newReadOptions(nil))
	if err != nil {
		return nil, err
	}
	if _, serr := d.Lstat(SpecFile); errors.Is(serr, fs.ErrNotExist) {
		return nil, errNotJob(op, dir)
	}
	if c == nil {
		return nil, nil
	}
	if c.JobID != dir.ID() {
		return nil, errWrongJobID(op, dir.CancelPath(), c.JobID, dir)
	}
	return c, nil
}

// readCancelIn reads cancel.json in the job directory d: nil, nil when
// there is none. It checks neither that job.json exists nor the job_id.
func readCancelIn(d *fsys.Dir, o readOptions) (*CancelRequest, error) {
	dir := jobDir(d)
	const op = "read cancel request"
	var c *CancelRequest
	found, err := readTolerant(op, d, jobRecord(dir, CancelFile), o, func(b []byte) (err error) {
		c, _, err = decodeCancel(b)
		return err
	})
	if err != nil {
		return nil, withPath(err, op, dir.CancelPath())
	}
	if !found {
		return nil, nil
	}
	return c, nil
}

// pendingCancel is a cancel request found in a job directory: the request,
// or why cancel.json could not be read (it still counts as a request).
type pendingCancel struct {
	req *CancelRequest
	err error
}

// findCancel returns dir's cancel request, nil if there is none (or dir
// cannot be opened).
func findCancel(dir JobDir) *pendingCancel {
	d, err := openJobDir("read cancel request", dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	return findCancelIn(d)
}

// findCancelIn is findCancel in the job directory d, which the caller holds
// open: the request it finds is the one of the directory the caller works
// in, whatever has been renamed meanwhile.
func findCancelIn(d *fsys.Dir) *pendingCancel {
	if _, err := d.Lstat(CancelFile); err != nil {
		return nil
	}
	req, err := readCancelChecked(d)
	if req == nil && err == nil {
		return nil // removed between the two looks
	}
	return &pendingCancel{req, err}
}

// String names the requester, the time and the reason.
func (p *pendingCancel) String() string {
	if p.req == nil {
		return "cancel requested (" + CancelFile + " cannot be read, so by whom and why is unknown)"
	}
	by := "an unnamed requester"
	if p.req.RequestedBy != "" {
		by = fmt.Sprintf("%q", p.req.RequestedBy)
	}
	s := fmt.Sprintf("cancel requested by %s at %s", by, p.req.RequestedAt.Format(time.RFC3339))
	if p.req.Reason != "" {
		s += fmt.Sprintf(", reason %q", p.req.Reason)
	}
	return s
}

// asError is the request as an ErrCancelRequested error of op.
func (p *pendingCancel) asError(op string, dir JobDir, msg, remedy string) *Error {
	if msg != "" {
		msg = "; " + msg
	}
	msg = p.String() + msg
	return errCancelRequested(op, dir.CancelPath(), p.err, msg, remedy)
}

// pathExists reports whether path names something.
func pathExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

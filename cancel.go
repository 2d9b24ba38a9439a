package jobstore

import (
	"errors"
	"fmt"
	"time"

	"github.com/axqua/jobstore/internal/attempt"
)

// RequestCancel asks the job in dir to stop, from any process.
//
// It stamps SchemaVersion, JobID with dir's base name if empty (it must
// equal it), RequestedAt with Now() if zero, and publishes cancel.json the
// way WriteSpec publishes job.json: written and fsynced under a temp name,
// then given its name only if the name is free (no-replace rename or
// link(2); MoveFileEx without REPLACE_EXISTING on Windows), the directory
// fsynced, the file read-only. Of several racing requests, in one process
// or many, exactly one file is published; the first request stands and the
// others return nil having changed nothing: a second request is not an
// error.
//
// Where the request takes effect:
//   - Queued job (or no status.json yet): RequestCancel takes job.lock
//     without waiting and, if it gets it and the job is still queued,
//     claims the job's next attempt exactly as Start does (job.lock may not
//     reach a starter on another host; the claim does) and, if it wins,
//     writes cancelled itself, durably (seq+1, finished_at, the attempt, the
//     request in the message), and ends the attempt. If the lock is held or
//     a starter won the claim, that starter sees the request after its
//     claim and refuses, or its Run's Context sees it. A later Start fails
//     with ErrCancelRequested.
//   - Running job: the runner's Run.Context is done, with ErrCancelRequested
//     as its cause; the runner then calls Finish(Outcome{State: Cancelled}).
//     If it finishes succeeded or failed first, that outcome stands and
//     cancel.json stays (see Run.Finish). If the runner is gone, Reconcile
//     marks the job cancelled instead of lost.
//
// A job in a terminal state is ErrWrongState and nothing is
// written, except that a job already cancelled on an existing request
// returns nil (the request is done). A request racing the runner's own
// Finish may be published just after the terminal status: RequestCancel
// then returns nil, and the status tells which came first. A dir without
// job.json is ErrNotJob; invalid input (a dir whose last element is not a
// job ID included: Subject "job_id") is ErrInvalid before anything is
// touched; a failed write leaves no temp file and no cancel.json.
func RequestCancel(dir JobDir, req CancelRequest) error {
	const op = "request cancel"
	if err := checkJobDir(op, dir); err != nil {
		return err
	}
	dir = dir.clean()
	path := dir.CancelPath()
	st, err := ReadStatus(dir)
	if err != nil {
		return err
	}
	if st != nil && st.State.Terminal() {
		if st.State == Cancelled && pathExists(path) {
			return nil
		}
		return errWrongState(op, dir.StatusPath(), invalid{found: string(st.State), supported: []State{Queued, Running}, msg: fmt.Sprintf("the job is already %s; a finished job cannot be cancelled", st.State), remedy: "nothing to cancel: the job has ended"})
	}
	req.SchemaVersion = CancelSchemaVersion
	if req.JobID == "" {
		req.JobID = dir.ID()
	}
	if req.RequestedAt.IsZero() {
		req.RequestedAt = Now()
	}
	if err := req.validate(op, path); err != nil {
		return err
	}
	if req.JobID != dir.ID() {
		return errWrongJobID(op, path, req.JobID, dir)
	}
	data, err := encodeRecord(op, path, "cancel request", "cannot encode the request as JSON", "", req)
	if err != nil {
		return err
	}
	o := newWriteOptions(nil).writeOnce()
	if err := writeRecord(jobRecord(dir, CancelFile), data, o, createOnly); err != nil && !errors.Is(err, ErrExists) {
		return err
	}
	if st == nil || st.State == Queued {
		// Also when an earlier request won the publish: if its requester
		// died before cancelling the queued job, this one finishes the work.
		_, err = cancelQueued(dir)
	}
	return err
}

// writeCancelled writes the terminal cancelled status after last (nil: no
// status yet) as the owner of claim c, durably, with seq+1, finished_at and
// c's attempt, then ends the attempt (.run-N becomes .fenced-N, so nobody
// revives it). Only the holder of the next attempt writes cancelled on a job
// that has not ended: job.lock may not reach other hosts, and a starter
// there that claimed the attempt would write running over the record. A
// job at the largest seq is not changed (seq never wraps): ErrInvalid,
// Subject "seq", and the claim is withdrawn.
func writeCancelled(dir JobDir, c *attempt.Claim, last *JobStatus, msg string) error {
	const op = "cancel"
	next := JobStatus{}
	if last != nil {
		next = copyStatus(*last)
	}
	seq, err := nextSeq(op, dir.StatusPath(), next.Seq)
	if err != nil {
		_ = c.Withdraw()
		return err
	}
	now := Now()
	next.State = Cancelled
	next.Seq = seq
	next.Attempt = c.N()
	next.UpdatedAt = now
	next.FinishedAt = &now
	next.Message = msg
	next.ExitCode, next.Error, next.Remedy = nil, "", ""
	if err := writeStatusAs(c, dir, next, nil); err != nil {
		_ = c.Withdraw()
		return ownerWriteError("write status", dir, c.N(), err)
	}
	err = endClaim(op, dir, c)
	retire(dir) // ended: out of the live index, as Finish takes its job out
	return err
}

// cancelQueued writes cancelled for a job that is queued (or has no status)
// and has a cancel request, if job.lock is free; a held lock means a runner
// is starting it, and its Start sees the request. changed reports the write.
func cancelQueued(dir JobDir) (changed bool, err error) {
	p := findCancel(dir)
	if p == nil {
		return false, nil
	}
	lk, err := LockJob(dir)
	if errors.Is(err, ErrLocked) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer func() {
		if uerr := lk.Unlock(); err == nil {
			err = uerr
		}
	}()
	return cancelClaimed(dir, lk, p)
}

// cancelClaimed is cancelQueued's work once it holds job.lock, which may not
// reach a starter on another host: it claims the job's next attempt as
// Start does (claimForStart), so that exactly one of the canceller and any
// starter goes on. Having won, it writes cancelled. Having lost, it writes
// nothing: the winner is a starter, which checks for the request after its
// claim (published before this claim, so it sees it) or runs the job, whose
// runner's Context ends on the request; or the job ended meanwhile.
func cancelClaimed(dir JobDir, lk *Lock, p *pendingCancel) (bool, error) {
	const op = "cancel"
	st, err := ReadStatus(dir) // again, under the lock
	if err != nil || (st != nil && st.State != Queued) {
		return false, err
	}
	_, o, jd, err := openToClaim(op, dir, nil)
	if err != nil {
		return false, err
	}
	defer jd.Close()
	c, st, _, err := (&claimant{op, jd, lk, o.claimOptions}).forStart(st)
	if lostClaim(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := writeCancelled(dir, c, st, "cancelled before it started: "+p.String()); err != nil {
		return false, err
	}
	return true, nil
}

// reconcileCancelled turns the lost status Reconcile is about to write for
// a running job whose runner is gone into cancelled when the job has a
// cancel request: the runner died before it could act on the request.
func reconcileCancelled(dir JobDir, lost *JobStatus) {
	p := findCancel(dir)
	if p == nil {
		return
	}
	lost.State = Cancelled
	lost.Message = "cancelled: " + p.String() + "; and " + lost.Message
	lost.Error = "the runner went away before it confirmed the cancellation"
	lost.Remedy = "nothing to do: the job was to stop, and it has; inspect its output if it may have done part of its work"
}

// finishMessage is the message Finish writes for outcome state when the
// job has the cancel request p (nil: none, and msg stands): a runner's Cancelled with no message of its own
// gets the request's; a Succeeded or Failed gets a note that the request
// came too late to change the outcome (cancel.json stays, so a reader sees
// both; a request published after Finish's look carries no note, and its
// requested_at is later than finished_at).
func finishMessage(p *pendingCancel, state State, msg string) string {
	switch {
	case p == nil:
		return msg
	case state == Cancelled && msg == "":
		return "cancelled on request: " + p.String()
	case state == Cancelled:
		return msg
	case msg != "":
		msg += "; "
	}
	return msg + p.String() + ", too late: the job had already " + string(state)
}

// cancelPollInterval is the safety poll of a Run's wait for cancel.json:
// how late a request is seen where the filesystem delivers no events (NFS,
// SMB, FUSE written by another host) or no watch could be had.
const cancelPollInterval = time.Second

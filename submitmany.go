package jobstore

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/axqua/jobstore/internal/fsys"
)

// SubmitMany submits specs under root as one group, each job as Submit
// makes it (whole or not at all, an ID from NewJobID where spec.ID is
// empty), and returns the job directories made, in the order of specs.
// The jobs are built concurrently and renamed into root in the order of
// specs; the fsyncs that make their names durable are made once for all.
// If it returns nil, every job is durable.
//
// Every spec is validated first: an invalid spec, or one whose ID another
// spec has, is ErrInvalid (Path naming that spec's job) and nothing is
// touched. After that, the first job that cannot be made (its ID taken:
// ErrExists; a full disk) ends the batch: the jobs before it stay, made
// and durable, and are returned; specs[len(dirs)] is that job, which the
// error (an *Error whose Msg names it, "specs[i] of n (job ID)", wrapping
// what Submit would return) names; none after it is made. If the final fsyncs (of .submit and root)
// fail, that is the error instead: the jobs returned are in place but may
// not survive a power cut. A process killed during SubmitMany leaves each
// job whole or absent: any of them may be there, not only a prefix. An
// empty specs does nothing. How: docs/mechanisms.md.
func SubmitMany(root string, specs []JobSpec) ([]JobDir, error) {
	const op = "submit"
	jobs, err := prepareBatch(op, root, specs)
	if err != nil || len(jobs) == 0 {
		return nil, err
	}
	rd, err := openRoot(op, root)
	if err != nil {
		return nil, batchFailure(err, 0, len(jobs), jobs[0].dir.ID())
	}
	defer rd.Close()
	sd, err := openSubmitDir(rd)
	if err != nil {
		return nil, batchFailure(err, 0, len(jobs), jobs[0].dir.ID())
	}
	defer sd.Close()
	var dirs []JobDir
	var failed error
	for start := 0; start < len(jobs) && failed == nil; start += batchChunk {
		chunk := jobs[start:min(start+batchChunk, len(jobs))]
		builds, errs := buildBatch(op, rd, sd, chunk)
		for k, j := range chunk {
			i := start + k
			switch {
			case failed != nil:
				if builds[k] != "" {
					_ = removeBuildDir(sd, builds[k])
				}
			case errs[k] != nil:
				failed = batchFailure(errs[k], i, len(jobs), j.dir.ID())
			default:
				if err := publishJob(op, rd, sd, builds[k], j.dir); err != nil {
					failed = batchFailure(err, i, len(jobs), j.dir.ID())
					continue
				}
				dirs = append(dirs, j.dir)
			}
		}
	}
	if len(dirs) == 0 {
		return nil, failed
	}
	if err := syncPublished(rd, sd, fmt.Sprintf("%d of %d jobs are in place and visible", len(dirs), len(jobs)),
		"check the disk and filesystem; the jobs returned exist, so do not submit them again"); err != nil {
		return dirs, err
	}
	return dirs, failed
}

// batchJob is a spec of SubmitMany, validated and encoded.
type batchJob struct {
	dir  JobDir
	recs []builtRecord
}

// prepareBatch gives each spec its ID, validates and encodes it, and
// refuses an ID that two specs share, before anything is touched.
func prepareBatch(op, root string, specs []JobSpec) ([]batchJob, error) {
	jobs := make([]batchJob, len(specs))
	first := make(map[string]int, len(specs))
	o := newWriteOptions(nil)
	for i, spec := range specs {
		if spec.ID == "" {
			spec.ID = NewJobID()
		}
		dir, err := dirFor(op, root, spec.ID)
		if err != nil {
			return nil, batchInvalid(err, i, len(specs))
		}
		if k, ok := first[spec.ID]; ok {
			return nil, errInvalid(op, string(dir), invalid{subject: "job_id", found: spec.ID,
				msg:    fmt.Sprintf("specs[%d] and specs[%d] have the same job ID %q", k, i, spec.ID),
				remedy: "give each spec of a batch its own job ID (or none: each gets a new one); nothing was submitted"})
		}
		first[spec.ID] = i
		specData, err := encodeSpec(op, dir, spec)
		if err != nil {
			return nil, batchInvalid(err, i, len(specs))
		}
		statusData, err := encodeStatus(op, dir, &JobStatus{State: Queued, Seq: 1})
		if err != nil {
			return nil, batchInvalid(err, i, len(specs))
		}
		jobs[i] = batchJob{dir, []builtRecord{{SpecFile, specData, o.writeOnce(), createOnly}, {StatusFile, statusData, o, replaceTarget}}}
	}
	return jobs, nil
}

// batchChunk is how many jobs of a batch are built before they are
// renamed into root: a large batch's jobs appear chunk by chunk, and no
// build directory waits for its rename longer than one chunk's building
// (a build unchanged for DefaultSweepAge is swept as abandoned).
const batchChunk = 256

// batchBuilders is how many jobs of a batch are built at once: fsyncs
// issued together are committed together by a journaling filesystem (one
// journal commit for many files), which is most of a batch's gain.
const batchBuilders = 8

// buildBatch builds each job of jobs in sd (buildJob), batchBuilders at a
// time, and returns the build directories' names and the failures, by
// job. Once a job fails, the jobs after it are not begun (they would be
// removed unpublished).
func buildBatch(op string, rd, sd *fsys.Dir, jobs []batchJob) (builds []string, errs []error) {
	builds, errs = make([]string, len(jobs)), make([]error, len(jobs))
	var next, failedAt atomic.Int64
	failedAt.Store(int64(len(jobs)))
	var wg sync.WaitGroup
	for range min(batchBuilders, len(jobs)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(jobs) || int64(i) > failedAt.Load() {
					return
				}
				j := jobs[i]
				err := jobNameTaken(op, rd, j.dir)
				if err == nil {
					builds[i], err = buildJob(op, sd, j.dir, j.recs)
				}
				if errs[i] = err; err != nil {
					lowerTo(&failedAt, int64(i))
				}
			}
		})
	}
	wg.Wait()
	return builds, errs
}

// batchFailure is err, the failure of the job id, specs[i] of a batch of
// n, after the jobs before it were made, saying so.
func batchFailure(err error, i, n int, id string) error {
	return annotated(err, func(e *Error) {
		e.Msg = fmt.Sprintf("specs[%d] of %d (job %s), the first job not submitted (the %d before it were, none after it): %s", i, n, id, i, reason(e))
	})
}

// batchInvalid is err, the refusal of specs[i] of a batch of n before
// anything was touched, saying so.
func batchInvalid(err error, i, n int) error {
	return annotated(err, func(e *Error) {
		e.Msg = fmt.Sprintf("specs[%d] of %d (no job of the batch was submitted): %s", i, n, reason(e))
	})
}

// lowerTo sets a to v if v is lower.
func lowerTo(a *atomic.Int64, v int64) {
	for {
		if f := a.Load(); v >= f || a.CompareAndSwap(f, v) {
			return
		}
	}
}

// reason is what e says went wrong, as its Error reads it.
func reason(e *Error) string {
	if e.Msg == "" && e.Sentinel != nil {
		return strings.TrimPrefix(e.Sentinel.Error(), "jobstore: ")
	}
	return e.Msg
}

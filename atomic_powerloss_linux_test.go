package jobstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/crashmodel"
	"github.com/axqua/jobstore/internal/strace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// strictRead reads once: the model's states are final, there is no writer
// to wait for.
var strictRead = jobstore.WithRetries(1, 0)

// otherThanTemps lists the names in dir that are neither keep nor temp files.
func otherThanTemps(dir string, keep ...string) []string {
	des, err := os.ReadDir(dir)
	if err != nil {
		return []string{fmt.Sprintf("cannot list %s: %v", dir, err)}
	}
	var bad []string
	for _, de := range des {
		if !slices.Contains(keep, de.Name()) && !jobstore.IsTempName(de.Name()) {
			bad = append(bad, fmt.Sprintf("unexpected %s in %s", de.Name(), filepath.Base(dir)))
		}
	}
	return bad
}

func short(b []byte) string {
	if len(b) > 40 {
		return fmt.Sprintf("%q... (%d bytes)", b[:40], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// checkStatusState: status.json is the old or the new record, complete, and
// the new one once acknowledged; job.json is untouched.
func checkStatusState(oldB, newB, specB []byte) func(root string, acked bool) []string {
	oldSt, _, errOld := jobstore.DecodeStatus(oldB)
	newSt, _, errNew := jobstore.DecodeStatus(newB)
	return func(root string, acked bool) []string {
		if err := errors.Join(errOld, errNew); err != nil {
			return []string{err.Error()}
		}
		dir := jobstore.JobDir(filepath.Join(root, tracedJobA))
		var bad []string
		b, err := os.ReadFile(dir.StatusPath())
		switch {
		case err != nil:
			bad = append(bad, fmt.Sprintf("status.json: %v", err))
		case bytes.Equal(b, newB):
		case bytes.Equal(b, oldB) && acked:
			bad = append(bad, "status.json holds the old record after WriteStatus returned nil")
		case !bytes.Equal(b, oldB):
			bad = append(bad, "status.json is neither record: "+short(b))
		}
		st, err := jobstore.ReadStatus(dir, strictRead)
		switch {
		case err != nil:
			bad = append(bad, fmt.Sprintf("ReadStatus: %v", err))
		case st == nil:
			bad = append(bad, "ReadStatus: no status")
		case !assert.ObjectsAreEqual(*st, *newSt) && !assert.ObjectsAreEqual(*st, *oldSt):
			bad = append(bad, fmt.Sprintf("ReadStatus returned neither record: %+v", *st))
		}
		if b, err := os.ReadFile(dir.SpecPath()); err != nil || !bytes.Equal(b, specB) {
			bad = append(bad, fmt.Sprintf("job.json changed: %s %v", short(b), err))
		}
		return append(bad, otherThanTemps(string(dir), jobstore.SpecFile, jobstore.StatusFile, jobstore.LockFile)...)
	}
}

// checkSpecState: the job directory of WriteSpec is absent and
// unacknowledged, or holds job.json complete; nothing else is in the root
// but the hidden build directory a crash leaves (swept later).
func checkSpecState(specB []byte) func(root string, acked bool) []string {
	return checkNewJobState(tracedJobB, "WriteSpec", specB, nil)
}

// checkSubmitState: the job directory of Submit is absent and
// unacknowledged, or holds job.json and the first status.json, complete.
func checkSubmitState(specB, statusB []byte) func(root string, acked bool) []string {
	return checkNewJobState(tracedJobC, "Submit", specB, statusB)
}

// checkNewJobState checks the job id that call made under root: either
// absent (and call unacknowledged) or whole: job.json equal to specB and
// read back by ReadSpec, status.json (if statusB is not nil) equal to
// statusB and read back by ReadStatus, nothing else but job.lock and temp
// files; and
// nothing else in root but .submit and build directories in it, and the
// live index with at most the job's entry.
func checkNewJobState(id, call string, specB, statusB []byte) func(root string, acked bool) []string {
	spec, _, errSpec := jobstore.DecodeSpec(specB)
	return func(root string, acked bool) []string {
		if errSpec != nil {
			return []string{errSpec.Error()}
		}
		dir := jobstore.JobDir(filepath.Join(root, id))
		var bad []string
		bad = append(bad, otherThanTemps(root, id, ".submit", jobstore.LiveDir)...)
		// The live index may hold the job's entry, with or without the job:
		// an entry is a hint, and one without its job is retired by a look.
		for _, name := range otherThanTemps(filepath.Join(root, jobstore.LiveDir), id) {
			if !strings.Contains(name, "no such file") {
				bad = append(bad, name)
			}
		}
		for _, name := range otherThanTemps(filepath.Join(root, ".submit")) {
			if !strings.Contains(name, "unexpected "+id+"-") && !strings.Contains(name, "no such file") {
				bad = append(bad, name)
			}
		}
		if _, err := os.Lstat(string(dir)); errors.Is(err, fs.ErrNotExist) {
			if acked {
				bad = append(bad, "the job is missing after "+call+" returned nil")
			}
			return bad
		}
		keep := []string{jobstore.SpecFile, jobstore.LockFile} // an empty job.lock is made with the job
		b, err := os.ReadFile(dir.SpecPath())
		got, rerr := jobstore.ReadSpec(dir, strictRead)
		switch {
		case err != nil:
			bad = append(bad, fmt.Sprintf("a job directory without a readable job.json: %v", err))
		case !bytes.Equal(b, specB):
			bad = append(bad, "job.json is incomplete: "+short(b))
		case rerr != nil || !assert.ObjectsAreEqual(got, spec):
			bad = append(bad, fmt.Sprintf("ReadSpec of a complete job.json: %+v, %v", got, rerr))
		}
		if statusB != nil {
			keep = append(keep, jobstore.StatusFile)
			b, err := os.ReadFile(dir.StatusPath())
			st, rerr := jobstore.ReadStatus(dir, strictRead)
			switch {
			case err != nil:
				bad = append(bad, fmt.Sprintf("a job without its first status.json: %v", err))
			case !bytes.Equal(b, statusB):
				bad = append(bad, "status.json is incomplete: "+short(b))
			case rerr != nil || st == nil || st.State != jobstore.Queued || st.Seq != 1:
				bad = append(bad, fmt.Sprintf("ReadStatus of a complete status.json: %+v, %v", st, rerr))
			}
		}
		return append(bad, otherThanTemps(string(dir), keep...)...)
	}
}

// TestPowerLoss_EveryCrashStateHoldsOldOrNewRecord enumerates power-loss
// states in the manner of ALICE and LazyFS. The syscall trace (strace) of
// one WriteStatus over an existing status.json, of one WriteSpec that
// creates its job directory and of one Submit, is replayed on the abstract
// file system of internal/crashmodel, whose package documentation states
// the persistence model. After every call of the trace a power cut is assumed; every on-disk
// state that cut could leave is built, written out to a real directory and
// read back with the public readers (ReadStatus, ReadSpec) and plain
// os.ReadFile.
//
// What must hold in every state: status.json is the old record or the new
// one, complete (equal bytes, and ReadStatus returns that record), and the
// new one if the cut came after WriteStatus returned nil; a new job
// directory is absent (then WriteSpec or Submit had not returned) or whole:
// job.json complete, and for Submit status.json complete too, never an
// empty or half-made job directory; job.json of the status job is
// untouched; anything else in a job directory is a temp file (IsTempName),
// and in the root a hidden build directory. Deleting the file fsync or a directory fsync from the trace
// must produce violations, which proves the model and the checks can fail.
func TestPowerLoss_EveryCrashStateHoldsOldOrNewRecord(t *testing.T) {
	var statusBase, specBase crashmodel.Image
	statusRun := traceProtocol(t, func(root string) {
		prepareTracedRoot(t, root)
		statusBase = snapshotImage(t, root)
	}, stepWriteStatus)
	specRun := traceProtocol(t, func(root string) { specBase = snapshotImage(t, root) }, stepWriteSpec)
	var submitBase crashmodel.Image
	submitRun := traceProtocol(t, func(root string) { submitBase = snapshotImage(t, root) }, stepSubmit)
	var inPlaceBase crashmodel.Image
	inPlaceRun := traceProtocol(t, func(root string) {
		prepareTracedRoot(t, root)
		inPlaceBase = snapshotImage(t, root)
	}, stepWriteStatusInPlace)

	// The records as the child wrote them: the bytes are the reference.
	jobA := jobstore.JobDir(statusRun.jobDir(tracedJobA))
	aSpec, aOld := statusBase[mustLookup(t, statusBase, tracedJobA+"/"+jobstore.SpecFile)].Data, statusBase[mustLookup(t, statusBase, tracedJobA+"/"+jobstore.StatusFile)].Data
	aNew, err := os.ReadFile(jobA.StatusPath())
	require.NoError(t, err)
	require.NotEqual(t, aOld, aNew)
	bSpec, err := os.ReadFile(jobstore.JobDir(specRun.jobDir(tracedJobB)).SpecPath())
	require.NoError(t, err)
	jobC := jobstore.JobDir(submitRun.jobDir(tracedJobC))
	cSpec, err := os.ReadFile(jobC.SpecPath())
	require.NoError(t, err)
	cStatus, err := os.ReadFile(jobC.StatusPath())
	require.NoError(t, err)
	aNewInPlace, err := os.ReadFile(jobstore.JobDir(inPlaceRun.jobDir(tracedJobA)).StatusPath())
	require.NoError(t, err)

	fileFsync := func(e strace.Event) bool { return e.Name == "fsync" && jobstore.IsTempName(e.Path) }
	dirFsync := func(dir string) func(e strace.Event) bool {
		return func(e strace.Event) bool { return e.Name == "fsync" && e.Path == dir }
	}
	// buildFsync is the nth (1-based) fsync of the hidden build directory.
	buildFsync := func(n int) func(e strace.Event) bool {
		seen := 0
		return func(e strace.Event) bool {
			if e.Name != "fsync" || filepath.Base(filepath.Dir(e.Path)) != ".submit" {
				return false
			}
			seen++
			return seen == n
		}
	}
	statusCase := func(name string, drop func(strace.Event) bool, wantViolations bool) powerLossCase {
		return powerLossCase{name, statusRun, statusBase, stepWriteStatus, drop, checkStatusState(aOld, aNew, aSpec), wantViolations}
	}
	specCase := func(name string, drop func(strace.Event) bool, wantViolations bool) powerLossCase {
		return powerLossCase{name, specRun, specBase, stepWriteSpec, drop, checkSpecState(bSpec), wantViolations}
	}
	submitCase := func(name string, drop func(strace.Event) bool, wantViolations bool) powerLossCase {
		return powerLossCase{name, submitRun, submitBase, stepSubmit, drop, checkSubmitState(cSpec, cStatus), wantViolations}
	}
	var states, checked int
	for _, tc := range []powerLossCase{
		statusCase("WriteStatus as traced", nil, false),
		statusCase("WriteStatus without the file fsync", fileFsync, true),
		statusCase("WriteStatus without the directory fsync", dirFsync(statusRun.jobDir(tracedJobA)), true),
		{"control: status.json rewritten in place (truncate, write, fsync)", inPlaceRun, inPlaceBase, stepWriteStatusInPlace,
			nil, checkStatusState(aOld, aNewInPlace, aSpec), true},
		specCase("WriteSpec as traced", nil, false),
		specCase("WriteSpec without the file fsync", fileFsync, true),
		specCase("WriteSpec without the build directory's fsync", buildFsync(1), true),
		specCase("WriteSpec without the fsync of the root after the rename", dirFsync(specRun.root), true),
		submitCase("Submit as traced", nil, false),
		submitCase("Submit without status.json's fsync", func(e strace.Event) bool {
			return e.Name == "fsync" && jobstore.IsTempName(e.Path) && strings.HasPrefix(filepath.Base(e.Path), "."+jobstore.StatusFile)
		}, true),
		submitCase("Submit without the build directory's fsync", buildFsync(1), true),
		submitCase("Submit without the fsync of .submit after the rename", dirFsync(filepath.Join(submitRun.root, ".submit")), true),
		submitCase("Submit without the fsync of the root after the rename", dirFsync(submitRun.root), true),
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := tc.run.step(t, tc.step)
			if tc.drop != nil {
				kept := slices.DeleteFunc(slices.Clone(evs), tc.drop)
				require.Equal(t, 1, len(evs)-len(kept), "the call to delete must be in the trace exactly once:\n%s", formatEvents(evs))
				evs = kept
			}
			m, err := crashmodel.Build(tc.run.root, tc.base, evs)
			require.NoError(t, err)
			r, err := m.Check(tempDir(t), tc.check)
			require.NoError(t, err)
			t.Logf("%d model operations, %d crash points, %d states enumerated, %d distinct states checked, %d violations",
				r.Ops, r.Ops+1, r.Enumerated, r.Checked, len(r.Violations))
			if tc.wantViolations {
				require.NotEmpty(t, r.Violations, "the model found no state that breaks the guarantee, so it cannot tell")
				t.Logf("first violation (expected):\n\t%s", r.Violations[0])
				return
			}
			states, checked = states+r.Enumerated, checked+r.Checked
			if len(r.Violations) > 0 {
				t.Errorf("%d states a power cut may leave break the guarantee; the first ones:\n\t%s",
					len(r.Violations), strings.Join(r.Violations[:min(len(r.Violations), 4)], "\n\t"))
			}
		})
	}
	t.Logf("real traces: %d power-loss states enumerated, %d distinct states checked", states, checked)
}

type powerLossCase struct {
	name           string
	run            *protocolTrace
	base           crashmodel.Image
	step           string
	drop           func(strace.Event) bool // the call deleted from the trace, or nil
	check          func(root string, acked bool) []string
	wantViolations bool
}

func mustLookup(t testing.TB, img crashmodel.Image, rel string) int {
	t.Helper()
	ino, ok := img.Lookup(rel)
	require.True(t, ok, "%s not in the snapshot", rel)
	return ino
}

// snapshotImage reads the tree under root into a model image.
func snapshotImage(t testing.TB, root string) crashmodel.Image {
	t.Helper()
	img, err := crashmodel.Snapshot(root)
	require.NoError(t, err)
	return img
}

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
		return append(bad, otherThanTemps(string(dir), jobstore.SpecFile, jobstore.StatusFile)...)
	}
}

// checkSpecState: job.json is absent and unacknowledged, or complete.
func checkSpecState(specB []byte) func(root string, acked bool) []string {
	spec, _, errSpec := jobstore.DecodeSpec(specB)
	return func(root string, acked bool) []string {
		if errSpec != nil {
			return []string{errSpec.Error()}
		}
		dir := jobstore.JobDir(filepath.Join(root, tracedJobB))
		var bad []string
		b, err := os.ReadFile(dir.SpecPath())
		got, rerr := jobstore.ReadSpec(dir, strictRead)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if acked {
				bad = append(bad, "job.json is missing after WriteSpec returned nil")
			}
			if !errors.Is(rerr, jobstore.ErrNotJob) {
				bad = append(bad, fmt.Sprintf("ReadSpec of a missing job.json: %v, want ErrNotJob", rerr))
			}
		case err != nil:
			bad = append(bad, fmt.Sprintf("job.json: %v", err))
		case !bytes.Equal(b, specB):
			bad = append(bad, "job.json is incomplete: "+short(b))
		case rerr != nil || !assert.ObjectsAreEqual(got, spec):
			bad = append(bad, fmt.Sprintf("ReadSpec of a complete job.json: %+v, %v", got, rerr))
		}
		if _, err := os.Stat(string(dir)); err == nil {
			bad = append(bad, otherThanTemps(string(dir), jobstore.SpecFile)...)
		}
		return append(bad, otherThanTemps(root, tracedJobB)...)
	}
}

// TestPowerLoss_EveryCrashStateHoldsOldOrNewRecord enumerates power-loss
// states in the manner of ALICE and LazyFS. The syscall trace (strace) of
// one WriteStatus over an existing status.json, and of one WriteSpec that
// creates its job directory, is replayed on the abstract file system of
// internal/crashmodel, whose package documentation states the persistence
// model. After every call of the trace a power cut is assumed; every on-disk
// state that cut could leave is built, written out to a real directory and
// read back with the public readers (ReadStatus, ReadSpec) and plain
// os.ReadFile.
//
// What must hold in every state: status.json is the old record or the new
// one, complete (equal bytes, and ReadStatus returns that record), and the
// new one if the cut came after WriteStatus returned nil; job.json is
// absent (then WriteSpec had not returned) or complete; job.json of the
// status job is untouched; anything else in a job directory is a temp file
// (IsTempName). Deleting the file fsync or a directory fsync from the trace
// must produce violations, which proves the model and the checks can fail.
func TestPowerLoss_EveryCrashStateHoldsOldOrNewRecord(t *testing.T) {
	var statusBase, specBase crashmodel.Image
	statusRun := traceProtocol(t, func(root string) {
		prepareTracedRoot(t, root)
		statusBase = snapshotImage(t, root)
	}, stepWriteStatus)
	specRun := traceProtocol(t, func(root string) { specBase = snapshotImage(t, root) }, stepWriteSpec)
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
	aNewInPlace, err := os.ReadFile(jobstore.JobDir(inPlaceRun.jobDir(tracedJobA)).StatusPath())
	require.NoError(t, err)

	fileFsync := func(e strace.Event) bool { return e.Name == "fsync" && jobstore.IsTempName(e.Path) }
	dirFsync := func(dir string) func(e strace.Event) bool {
		return func(e strace.Event) bool { return e.Name == "fsync" && e.Path == dir }
	}
	statusCase := func(name string, drop func(strace.Event) bool, wantViolations bool) powerLossCase {
		return powerLossCase{name, statusRun, statusBase, stepWriteStatus, drop, checkStatusState(aOld, aNew, aSpec), wantViolations}
	}
	specCase := func(name string, drop func(strace.Event) bool, wantViolations bool) powerLossCase {
		return powerLossCase{name, specRun, specBase, stepWriteSpec, drop, checkSpecState(bSpec), wantViolations}
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
		specCase("WriteSpec without the job directory fsync", dirFsync(specRun.jobDir(tracedJobB)), true),
		specCase("WriteSpec without the fsync of the new directory's parent", dirFsync(specRun.root), true),
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

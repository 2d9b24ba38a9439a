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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// powerLossReport counts what one model run covered.
type powerLossReport struct {
	ops, enumerated, checked int
	violations               []string
}

// checkEveryCrashState enumerates the states of every crash point of m,
// materialises each distinct one under scratch and checks it. A state is
// acknowledged when the cut came after the last operation (the call had
// returned nil).
func checkEveryCrashState(t testing.TB, m *crashModel, scratch string, check func(root string, acked bool) []string) powerLossReport {
	t.Helper()
	r := powerLossReport{ops: len(m.ops)}
	seen := map[string]bool{}
	for k := 0; k <= len(m.ops); k++ {
		acked := k == len(m.ops)
		at := "before the first call"
		if k > 0 {
			at = "after " + m.ops[k-1].String()
		}
		n, err := m.crashStates(k, func(img fsImage, what string) {
			key := fmt.Sprint(acked, "\n", img.render())
			if seen[key] {
				return
			}
			seen[key] = true
			r.checked++
			dst := filepath.Join(scratch, fmt.Sprint("state", r.checked))
			require.NoError(t, os.Mkdir(dst, 0o755))
			require.NoError(t, img.materialize(dst))
			for _, p := range check(dst, acked) {
				r.violations = append(r.violations, fmt.Sprintf("power cut %s (acknowledged: %v)\n\t\tpending: %s\n\t\t=> %s", at, acked, what, p))
			}
			require.NoError(t, os.RemoveAll(dst))
		})
		require.NoError(t, err)
		r.enumerated += n
	}
	return r
}

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
// creates its job directory, is replayed on a small abstract file system
// (crashmodel_linux_test.go: directories of named entries pointing at inodes
// that hold data). After every call of the trace a power cut is assumed;
// every on-disk state that cut could leave is built, written out to a real
// directory and read back with the public readers (ReadStatus, ReadSpec)
// and plain os.ReadFile.
//
// The persistence model, a pessimistic reading of POSIX that journaling
// file systems (ext4, xfs, btrfs) stay within:
//
//   - Durable: the state before the call (the test's own setup is taken as
//     synced); file data written before a completed fsync of that file; a
//     directory entry change (create, rename, link, unlink, mkdir) made
//     before a completed fsync of its directory (both directories for a
//     cross-directory rename). Nothing else is: fsync of a file does not
//     make its name durable, and fsync of a directory does not make the
//     directory's own name in its parent durable.
//   - Pending (everything else executed before the cut): any subset may
//     have reached the disk, not only a prefix, so operations between two
//     syncs land in any order. A pending entry change is lost or applied
//     whole (a rename is atomic). A pending write is lost, applied, applied
//     as zeros (the size grew but the data blocks never landed), or half
//     applied (a prefix: torn). A pending truncate is lost or applied.
//     The persisted ones take effect in program order, so a later change to
//     the same name or byte wins.
//   - Not modelled: permissions and timestamps, the disk lying about a
//     flush, and a failed fsync (the fault tests cover that).
//
// What must hold in every state: status.json is the old record or the new
// one, complete (equal bytes, and ReadStatus returns that record), and the
// new one if the cut came after WriteStatus returned nil; job.json is
// absent (then WriteSpec had not returned) or complete; job.json of the
// status job is untouched; anything else in a job directory is a temp file
// (IsTempName). Deleting the file fsync or a directory fsync from the trace
// must produce violations, which proves the model and the checks can fail.
func TestPowerLoss_EveryCrashStateHoldsOldOrNewRecord(t *testing.T) {
	var statusBase, specBase fsImage
	statusRun := traceProtocol(t, func(root string) {
		prepareTracedRoot(t, root)
		statusBase = snapshotTree(t, root)
	}, stepWriteStatus)
	specRun := traceProtocol(t, func(root string) { specBase = snapshotTree(t, root) }, stepWriteSpec)
	var inPlaceBase fsImage
	inPlaceRun := traceProtocol(t, func(root string) {
		prepareTracedRoot(t, root)
		inPlaceBase = snapshotTree(t, root)
	}, stepWriteStatusInPlace)

	// The records as the child wrote them: the bytes are the reference.
	jobA := jobstore.JobDir(statusRun.jobDir(tracedJobA))
	aSpec, aOld := statusBase[mustLookup(t, statusBase, tracedJobA+"/"+jobstore.SpecFile)].data, statusBase[mustLookup(t, statusBase, tracedJobA+"/"+jobstore.StatusFile)].data
	aNew, err := os.ReadFile(jobA.StatusPath())
	require.NoError(t, err)
	require.NotEqual(t, aOld, aNew)
	bSpec, err := os.ReadFile(jobstore.JobDir(specRun.jobDir(tracedJobB)).SpecPath())
	require.NoError(t, err)
	aNewInPlace, err := os.ReadFile(jobstore.JobDir(inPlaceRun.jobDir(tracedJobA)).StatusPath())
	require.NoError(t, err)

	fileFsync := func(e fileEvent) bool { return e.Name == "fsync" && jobstore.IsTempName(e.Path) }
	dirFsync := func(dir string) func(e fileEvent) bool {
		return func(e fileEvent) bool { return e.Name == "fsync" && e.Path == dir }
	}
	statusCase := func(name string, drop func(fileEvent) bool, wantViolations bool) powerLossCase {
		return powerLossCase{name, statusRun, statusBase, stepWriteStatus, drop, checkStatusState(aOld, aNew, aSpec), wantViolations}
	}
	specCase := func(name string, drop func(fileEvent) bool, wantViolations bool) powerLossCase {
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
			m, err := buildCrashModel(tc.run.root, tc.base, evs)
			require.NoError(t, err)
			r := checkEveryCrashState(t, m, tempDir(t), tc.check)
			t.Logf("%d model operations, %d crash points, %d states enumerated, %d distinct states checked, %d violations",
				r.ops, r.ops+1, r.enumerated, r.checked, len(r.violations))
			if tc.wantViolations {
				require.NotEmpty(t, r.violations, "the model found no state that breaks the guarantee, so it cannot tell")
				t.Logf("first violation (expected):\n\t%s", r.violations[0])
				return
			}
			states, checked = states+r.enumerated, checked+r.checked
			if len(r.violations) > 0 {
				t.Errorf("%d states a power cut may leave break the guarantee; the first ones:\n\t%s",
					len(r.violations), strings.Join(r.violations[:min(len(r.violations), 4)], "\n\t"))
			}
		})
	}
	t.Logf("real traces: %d power-loss states enumerated, %d distinct states checked", states, checked)
}

type powerLossCase struct {
	name           string
	run            *protocolTrace
	base           fsImage
	step           string
	drop           func(fileEvent) bool // the call deleted from the trace, or nil
	check          func(root string, acked bool) []string
	wantViolations bool
}

func mustLookup(t testing.TB, img fsImage, rel string) int {
	t.Helper()
	ino, ok := img.lookup(rel)
	require.True(t, ok, "%s not in the snapshot", rel)
	return ino
}

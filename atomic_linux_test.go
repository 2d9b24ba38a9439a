package jobstore_test

import (
	"flag"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// limitFileSize makes every write past max bytes of any file of this process
// fail with EFBIG (RLIMIT_FSIZE; SIGXFSZ ignored), for the rest of the test.
// Unlike a read-only directory, root cannot bypass it. Process-wide: tests
// that use it must not run in parallel.
func limitFileSize(t testing.TB, max uint64) {
	t.Helper()
	var old syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old))
	signal.Ignore(syscall.SIGXFSZ)
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: max, Max: old.Max}))
	t.Cleanup(func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
			t.Errorf("restore RLIMIT_FSIZE: %v", err)
		}
		signal.Reset(syscall.SIGXFSZ)
	})
}

// rerunWithoutTestLog runs the calling test again in a child process of the
// test binary when go test's file log is on (-test.testlogfile, whenever
// results may be cached): this process appends to that log as it opens
// files, so a lowered RLIMIT_FSIZE would fail the log's writes too. It
// reports whether the test ran there.
func rerunWithoutTestLog(t *testing.T) bool {
	t.Helper()
	if f := flag.Lookup("test.testlogfile"); f == nil || f.Value.String() == "" {
		return false
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	out, err := exec.Command(exe, "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v").CombinedOutput()
	require.NoError(t, err, "the test in a child process without go test's file log:\n%s", out)
	t.Logf("ran in a child process without go test's file log:\n%s", out)
	return true
}

// TestWrites_FailedWriteLeavesOldRecordAndNoTemp: the temp file's write
// fails half-way (EFBIG). The old status is byte-identical, a new job.json
// does not appear, no temp file is left, and the error names the step and
// unwraps to the errno.
func TestWrites_FailedWriteLeavesOldRecordAndNoTemp(t *testing.T) {
	if rerunWithoutTestLog(t) {
		return
	}
	const limit = 4096
	big := strings.Repeat("x", 4*limit)
	dir := newJob(t, "efbig")
	require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Message: "old"}))
	fresh := newJobDir(t, "efbig")
	require.NoError(t, jobstore.WriteSpec(fresh, jobstore.JobSpec{ID: "efbig", Kind: "k"}))
	require.NoError(t, syscall.Unlink(fresh.SpecPath())) // a job directory without its job.json yet
	before, beforeFresh := fileSnapshot(t, string(dir)), fileSnapshot(t, string(fresh))

	limitFileSize(t, limit)
	writes := map[string]func() error{
		"WriteStatus": func() error {
			return jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Message: big})
		},
		"WriteStatus NoSync": func() error {
			return jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Message: big}, jobstore.NoSync())
		},
		"WriteJSONAtomic": func() error { return jobstore.WriteJSONAtomic(dir.StatusPath(), big) },
		"WriteSpec":       func() error { return jobstore.WriteSpec(fresh, jobstore.JobSpec{ID: "efbig", Kind: big}) },
	}
	for name, write := range writes {
		t.Run(name, func(t *testing.T) {
			err := write()
			assert.ErrorIs(t, err, syscall.EFBIG)
			e := errOf(t, err)
			assert.Equal(t, "write", e.Op)
			assert.True(t, jobstore.IsTempName(e.Path), "the error names the temp file: %s", e.Path)
			assert.Contains(t, e.Remedy, "intact")
			assert.Equal(t, before, fileSnapshot(t, string(dir)))
			assert.Equal(t, beforeFresh, fileSnapshot(t, string(fresh)))
		})
	}
}

package jobstore_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reconciler says "reading", reconciles the job in JOBSTORE_TEST_DIR, and
// says what it did.
func reconciler() int {
	fmt.Println("reading")
	changed, err := jobstore.Reconcile(jobstore.JobDir(os.Getenv(dirEnv)))
	fmt.Printf("changed=%v err=%v\n", changed, err)
	return 0
}

// runner is holder that reports progress first; it waits to be killed.
func runner() int {
	r, err := jobstore.Start(jobstore.JobDir(os.Getenv(dirEnv)), jobstore.WithProgressInterval(0))
	if err != nil {
		return exitCode(err)
	}
	if err := r.Progress(0.3, "working"); err != nil { // written before "started"
		return exitCode(err)
	}
	fmt.Println("started", os.Getpid())
	_, _ = io.Copy(io.Discard, os.Stdin) // until killed (or the parent gives up)
	return 1
}

// requireLost checks that dir was marked lost after a status of prev.
func requireLost(t *testing.T, dir jobstore.JobDir, prev jobstore.JobStatus) {
	t.Helper()
	st := readStatus(t, dir)
	require.Equal(t, jobstore.Lost, st.State)
	assert.Equal(t, prev.Seq+1, st.Seq)
	require.NotNil(t, st.FinishedAt)
	assert.Contains(t, st.Message, "pid "+strconv.Itoa(prev.PID), "names the last owner")
	assert.Contains(t, st.Message, strconv.Quote(prev.Host))
	assert.Contains(t, st.Message, prev.UpdatedAt.Format("2006-01-02T15:04:05Z07:00"), "and its last update")
	assert.NotEmpty(t, st.Remedy)
	assert.NotEmpty(t, st.Error)
	assert.Equal(t, prev.StartedAt, st.StartedAt)
	assert.Equal(t, prev.Progress, st.Progress)
}

func TestReconcile_RunnerClosedWithoutFinishIsLost(t *testing.T) {
	dir, r := startJob(t)
	require.NoError(t, r.Progress(0.4, "working"))
	prev := r.Status()
	require.NoError(t, r.Close())

	changed, err := jobstore.Reconcile(dir)
	require.NoError(t, err)
	assert.True(t, changed)
	requireLost(t, dir, prev)
	lk, err := jobstore.LockJob(dir)
	require.NoError(t, err, "Reconcile released the lock")
	require.NoError(t, lk.Unlock())

	changed, err = jobstore.Reconcile(dir)
	require.NoError(t, err)
	assert.False(t, changed, "a lost job is terminal: reconciled once")
}

func TestReconcile_LeavesAloneWhatIsNotAnOrphan(t *testing.T) {
	held := func(t *testing.T) jobstore.JobDir {
		dir, _ := startJob(t) // the Run holds the lock until cleanup
		return dir
	}
	inState := func(st jobstore.State) func(*testing.T) jobstore.JobDir {
		return func(t *testing.T) jobstore.JobDir {
			return writeJob(t, tempDir(t), specAt("j1", 0), statusIn(st, 3))
		}
	}
	tests := map[string]func(*testing.T) jobstore.JobDir{
		"lock held": held,
		"queued":    inState(jobstore.Queued),
		"succeeded": inState(jobstore.Succeeded),
		"failed":    inState(jobstore.Failed),
		"cancelled": inState(jobstore.Cancelled),
		"lost":      inState(jobstore.Lost),
		"no status": func(t *testing.T) jobstore.JobDir { return writeJob(t, tempDir(t), specAt("j1", 0), nil) },
	}
	for name, setup := range tests {
		t.Run(name, func(t *testing.T) {
			dir := setup(t)
			before, _ := os.ReadFile(dir.StatusPath())
			changed, err := jobstore.Reconcile(dir)
			require.NoError(t, err)
			assert.False(t, changed)
			after, _ := os.ReadFile(dir.StatusPath())
			assert.Equal(t, string(before), string(after), "status.json untouched")
		})
	}
}

func TestReconcile_UnreadableStatusIsAnError(t *testing.T) {
	dir := writeJob(t, tempDir(t), specAt("j1", 0), nil)
	require.NoError(t, os.WriteFile(dir.StatusPath(), []byte(`{"state":`), 0o644))
	changed, err := jobstore.Reconcile(dir)
	require.ErrorIs(t, err, jobstore.ErrCorrupt)
	assert.False(t, changed)
}

func TestReconcileAll_ReportsEveryJobAndSweeps(t *testing.T) {
	root := tempDir(t)
	orphan := writeJob(t, root, specAt("a-orphan", 0), statusIn(jobstore.Running, 9))
	heldHere, err := jobstore.Submit(root, jobstore.JobSpec{ID: "b-held", Kind: "test"})
	require.NoError(t, err)
	r, err := jobstore.Start(heldHere)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	queued := writeJob(t, root, specAt("c-queued", 0), statusIn(jobstore.Queued, 1))
	corrupt := writeJob(t, root, specAt("d-corrupt", 0), nil)
	require.NoError(t, os.WriteFile(corrupt.StatusPath(), []byte("{"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(root, "e-not-a-job"), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(root, ".hidden"), 0o755))
	oldTemp := tempFile(t, string(queued), ".status.json123", 2*jobstore.DefaultSweepAge)
	freshTemp := tempFile(t, string(queued), ".status.json456", 0)

	results, err := jobstore.ReconcileAll(root)
	require.NoError(t, err)
	require.Len(t, results, 5, "every directory but the dot-name")
	byID := map[string]jobstore.ReconcileResult{}
	for _, res := range results {
		byID[res.Dir.ID()] = res
	}
	assert.True(t, byID["a-orphan"].Changed)
	assert.NoError(t, byID["a-orphan"].Err)
	assert.False(t, byID["b-held"].Changed)
	assert.NoError(t, byID["b-held"].Err)
	assert.False(t, byID["c-queued"].Changed)
	assert.Equal(t, []string{filepath.Base(oldTemp)}, byID["c-queued"].Swept)
	assert.ErrorIs(t, byID["d-corrupt"].Err, jobstore.ErrCorrupt)
	assert.ErrorIs(t, byID["e-not-a-job"].Err, jobstore.ErrNotJob)

	assert.Equal(t, jobstore.Lost, readStatus(t, orphan).State)
	assert.Equal(t, jobstore.Running, readStatus(t, heldHere).State)
	assert.NoFileExists(t, oldTemp)
	assert.FileExists(t, freshTemp)
}

func TestReconcileAll_MissingRootIsAnError(t *testing.T) {
	_, err := jobstore.ReconcileAll(filepath.Join(tempDir(t), "nope"))
	require.Error(t, err)
	var e *jobstore.Error
	require.ErrorAs(t, err, &e)
	assert.NotEmpty(t, e.Remedy)
}

package jobstore_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// waitAsync runs Wait in a goroutine; the channel delivers its result.
func waitAsync(ctx context.Context, dir jobstore.JobDir, opts ...jobstore.WatchOption) <-chan waitResult {
	ch := make(chan waitResult, 1)
	go func() {
		st, err := jobstore.Wait(ctx, dir, opts...)
		ch <- waitResult{st, err}
	}()
	return ch
}

type waitResult struct {
	st  *jobstore.JobStatus
	err error
}

func awaitWait(t *testing.T, ch <-chan waitResult) waitResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(waitGuard):
		t.Fatalf("Wait did not return within %v", waitGuard)
		return waitResult{}
	}
}

func TestWait_ReturnsATerminalStatusAtOnceEvenWithContextDone(t *testing.T) {
	for _, state := range []jobstore.State{jobstore.Succeeded, jobstore.Failed, jobstore.Cancelled, jobstore.Lost} {
		t.Run(string(state), func(t *testing.T) {
			dir := writeJob(t, tempDir(t), specAt("j", 0), statusIn(state, 4))
			st, err := jobstore.Wait(doneCtx(), dir)
			require.NoError(t, err)
			require.Equal(t, state, st.State)
			require.Equal(t, uint64(4), st.Seq)
		})
	}
}

// The runner's updates, a torn status.json between them, then the end:
// Wait returns the terminal status and nothing before it.
func TestWait_ReturnsWhenTheJobEnds(t *testing.T) {
	for _, events := range []bool{true, false} {
		name := "events"
		var opts []jobstore.WatchOption
		if !events {
			name, opts = "poll alone", []jobstore.WatchOption{jobstore.WithoutEvents(), jobstore.WithPollInterval(10 * time.Millisecond)}
		}
		t.Run(name, func(t *testing.T) {
			dir := submitJob(t, "j")
			ch := waitAsync(context.Background(), dir, opts...)
			r, err := jobstore.Start(dir)
			require.NoError(t, err)
			defer r.Close()
			require.NoError(t, r.SetMessage("working"))
			time.Sleep(idleWhile)
			writeFile(t, dir.StatusPath(), []byte(`{"schema_version": 1, "state": "run`)) // by hand: a torn record
			time.Sleep(idleWhile)
			select {
			case res := <-ch:
				t.Fatalf("Wait returned before the job ended: %+v", res)
			default:
			}
			require.NoError(t, r.Finish(jobstore.Outcome{State: jobstore.Failed, Message: "bad input", ExitCode: ptr(3)}))
			res := awaitWait(t, ch)
			require.NoError(t, res.err)
			require.Equal(t, jobstore.Failed, res.st.State)
			require.Equal(t, 3, *res.st.ExitCode)
		})
	}
}

func TestWait_ErrorsThatWaitingCannotMend(t *testing.T) {
	t.Run("not a job", func(t *testing.T) {
		_, err := jobstore.Wait(context.Background(), newJobDir(t, "j"))
		require.ErrorIs(t, err, jobstore.ErrNotJob)
	})
	t.Run("removed while waiting", func(t *testing.T) {
		dir := submitJob(t, "j")
		ch := waitAsync(context.Background(), dir)
		time.Sleep(idleWhile)
		// Moved out of the root (os.RemoveAll fails under Wine): gone all the same.
		require.NoError(t, os.Rename(string(dir), string(dir)+"-gone"))
		require.ErrorIs(t, awaitWait(t, ch).err, jobstore.ErrNotJob)
	})
	t.Run("a newer schema", func(t *testing.T) {
		dir := submitJob(t, "j")
		ch := waitAsync(context.Background(), dir)
		time.Sleep(idleWhile)
		writeFile(t, dir.StatusPath(), []byte(`{"schema_version": 99, "job_id": "j", "state": "succeeded", "seq": 9}`))
		require.ErrorIs(t, awaitWait(t, ch).err, jobstore.ErrNewerSchema)
	})
	t.Run("context ends first", func(t *testing.T) {
		dir := submitJob(t, "j")
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		st, err := jobstore.Wait(ctx, dir)
		require.Nil(t, st)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		errOf(t, err)
	})
}

// TestWait_EndsAtOnceOnAStatusThatCanNeverAnswer: a status.json that no
// read can ever give a status from (a directory, a file larger than any
// record) ends the wait at once with a typed error naming the file, whether
// it was there when Wait began or replaced the record while it waited.
func TestWait_EndsAtOnceOnAStatusThatCanNeverAnswer(t *testing.T) {
	plants := map[string]struct {
		plant func(t *testing.T, path string)
		want  error
	}{
		"a directory": {func(t *testing.T, path string) {
			require.NoError(t, os.Remove(path))
			// On Windows a file a poller holds open stays, delete pending,
			// until it closes it: the name is free a moment later.
			deadline := time.Now().Add(waitGuard)
			for err := os.Mkdir(path, 0o755); err != nil; err = os.Mkdir(path, 0o755) {
				require.True(t, time.Now().Before(deadline), "%v", err)
				time.Sleep(idleWhile / 10)
			}
		}, jobstore.ErrNotRegular},
		"a 3 GiB file": {func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			require.NoError(t, err)
			require.NoError(t, f.Truncate(3<<30)) // sparse: costs no disk
			require.NoError(t, f.Close())
		}, jobstore.ErrTooLarge},
	}
	for name, p := range plants {
		t.Run(name+", before the wait", func(t *testing.T) {
			dir := submitJob(t, "j")
			p.plant(t, dir.StatusPath())
			_, err := awaitWaitErr(t, waitAsync(t.Context(), dir))
			requireNamesFile(t, err, p.want, dir.StatusPath())
		})
		t.Run(name+", while waiting", func(t *testing.T) {
			dir := submitJob(t, "j")
			ch := waitAsync(t.Context(), dir, jobstore.WithPollInterval(10*time.Millisecond))
			time.Sleep(idleWhile)
			p.plant(t, dir.StatusPath())
			_, err := awaitWaitErr(t, ch)
			requireNamesFile(t, err, p.want, dir.StatusPath())
		})
	}
}

// awaitWaitErr is awaitWait's status and error.
func awaitWaitErr(t *testing.T, ch <-chan waitResult) (*jobstore.JobStatus, error) {
	t.Helper()
	r := awaitWait(t, ch)
	return r.st, r.err
}

// requireNamesFile checks that err is of kind want and names path.
func requireNamesFile(t *testing.T, err, want error, path string) {
	t.Helper()
	require.ErrorIs(t, err, want)
	require.Equal(t, path, errOf(t, err).Path)
	require.NotEmpty(t, errOf(t, err).Remedy)
}

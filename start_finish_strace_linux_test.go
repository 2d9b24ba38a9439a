package jobstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/strace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A job's life on a runner, syscall by syscall: the "job-life" child runs
// Start, Finish and Close of tracedJobA under strace, each bracketed by
// marker stats as the "protocol" child's steps are.
const (
	stepStart  = "start"
	stepFinish = "finish"
	stepClose  = "close"
)

func init() {
	roles["job-life"] = func() int {
		root, mark := os.Getenv(traceRootEnv), os.Getenv(traceMarkEnv)
		dir := jobstore.JobDir(filepath.Join(root, tracedJobA))
		var run *jobstore.Run
		steps := []struct {
			name string
			do   func() error
		}{
			{stepStart, func() (err error) { run, err = jobstore.Start(dir); return err }},
			{stepFinish, func() error { return run.Finish(jobstore.Outcome{State: jobstore.Succeeded}) }},
			{stepClose, func() error { return run.Close() }},
		}
		for _, s := range steps {
			_, _ = os.Lstat(mark + "begin-" + s.name)
			if err := s.do(); err != nil {
				fmt.Fprintf(os.Stderr, "job-life child: %s: %v\n", s.name, err)
				return 1
			}
			_, _ = os.Lstat(mark + "ack-" + s.name)
		}
		return 0
	}
}

// TestJobLife_DurableInFourFsyncsWithoutRereadingTheSpec traces a Start, a
// Finish and a Close of one queued job and proves what each costs the disk
// and what each reads: Start and Finish each publish status.json through a
// temp file fsynced before its rename and fsync the job directory after it
// (so each is durable once it returns), and fsync nothing else (2 each, 4 a
// job: the floor of two durable replacing writes); Close fsyncs nothing.
// Finish looks for cancel.json once, and reads job.json not at all: taking
// the ended job out of the live index reads its status again, and needs
// the spec only if that status is live again.
func TestJobLife_DurableInFourFsyncsWithoutRereadingTheSpec(t *testing.T) {
	p := traceProtocolAs(t, "job-life", func(root string) {
		prepareTracedRoot(t, root)
		_, err := os.Lstat(filepath.Join(root, jobstore.LiveDir, tracedJobA))
		require.NoError(t, err, "the queued job has no live index entry to take out")
	}, stepStart, stepFinish, stepClose)
	dir := p.jobDir(tracedJobA)
	status := filepath.Join(dir, jobstore.StatusFile)
	run := filepath.Join(dir, ".run-1")
	fsyncs := func(evs []strace.Event) []string {
		var paths []string
		for _, e := range evs {
			if e.Name == "fsync" || e.Name == "fdatasync" {
				paths = append(paths, e.Path)
			}
		}
		return paths
	}
	count := func(evs []strace.Event, match func(e strace.Event) bool) int {
		n := 0
		for _, e := range evs {
			if match(e) {
				n++
			}
		}
		return n
	}
	for _, step := range []string{stepStart, stepFinish} {
		t.Run(step+" publishes status.json durably with two fsyncs", func(t *testing.T) {
			evs := p.step(t, step)
			var tmp string
			requireInOrder(t, evs, []traceStep{
				{"create the temp file in " + run, func(e strace.Event) bool {
					if e.Name != "openat" || !e.OK() || filepath.Dir(e.Path) != run || !jobstore.IsTempName(filepath.Base(e.Path)) {
						return false
					}
					tmp = e.Path
					return true
				}},
				{"fsync the temp file", func(e strace.Event) bool { return e.Name == "fsync" && e.OK() && e.Path == tmp }},
				{"rename it over status.json", func(e strace.Event) bool {
					return (e.Name == "renameat" || e.Name == "renameat2") && e.OK() && e.Path == tmp && e.NewPath == status
				}},
				{"fsync the job directory", func(e strace.Event) bool { return e.Name == "fsync" && e.OK() && e.Path == dir }},
			})
			require.Len(t, fsyncs(evs), 2, "fsyncs of %s: %v\n%s", step, fsyncs(evs), formatEvents(evs))
			t.Logf("%s: %d file syscalls:\n%s", step, len(evs), formatEvents(evs))
		})
	}
	t.Run("Finish looks for cancel.json once and never reads job.json", func(t *testing.T) {
		evs := p.step(t, stepFinish)
		spec := filepath.Join(dir, jobstore.SpecFile)
		assert.Zero(t, count(evs, func(e strace.Event) bool { return e.Name == "openat" && e.Path == spec }),
			"Finish opened job.json:\n%s", formatEvents(evs))
		cancel := filepath.Join(dir, jobstore.CancelFile)
		assert.Equal(t, 1, count(evs, func(e strace.Event) bool {
			return (e.Name == "newfstatat" || e.Name == "openat") && e.Path == cancel
		}), "Finish's looks for cancel.json:\n%s", formatEvents(evs))
	})
	t.Run("Close fsyncs nothing", func(t *testing.T) {
		evs := p.step(t, stepClose)
		assert.Empty(t, fsyncs(evs), "Close fsynced:\n%s", formatEvents(evs))
	})
	t.Run("the ended job left the live index", func(t *testing.T) {
		_, err := os.Lstat(filepath.Join(p.root, jobstore.LiveDir, tracedJobA))
		require.ErrorIs(t, err, os.ErrNotExist, "the live index still names the finished job")
		st, err := jobstore.ReadStatus(jobstore.JobDir(dir))
		require.NoError(t, err)
		require.Equal(t, jobstore.Succeeded, st.State, "what the traced child wrote")
		require.False(t, strings.HasSuffix(st.Message, "too late"), "no cancel request was made")
	})
}

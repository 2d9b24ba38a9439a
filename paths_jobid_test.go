package jobstore_test

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jobIDs prints JOBSTORE_TEST_COUNT new job IDs, one a line.
func jobIDs() int {
	n, err := strconv.Atoi(os.Getenv(countEnv))
	if err != nil {
		return exitCode(err)
	}
	var b strings.Builder
	for range n {
		b.WriteString(jobstore.NewJobID())
		b.WriteByte('\n')
	}
	_, err = os.Stdout.WriteString(b.String())
	return exitCode(err)
}

// idsPerProcess: the test takes this many IDs from each of two processes.
const idsPerProcess = 5000

// idTime parses the time an ID starts with.
func idTime(t *testing.T, id string) time.Time {
	t.Helper()
	stamp, _, ok := strings.Cut(id, "-")
	require.True(t, ok, id)
	tm, err := time.Parse("20060102T150405.000000Z", stamp)
	require.NoError(t, err, id)
	return tm
}

func TestNewJobID_ValidSortableAndUniqueAcrossProcesses(t *testing.T) {
	var all []string
	for range 2 {
		cmd := childCommand(t, "jobids", fmt.Sprintf("%s=%d", countEnv, idsPerProcess))
		out, err := cmd.Output()
		require.NoError(t, err)
		got := strings.Fields(string(out))
		require.Len(t, got, idsPerProcess)
		assert.True(t, slices.IsSorted(got), "one process's IDs come out in order")
		for i := 1; i < len(got); i++ {
			require.Less(t, got[i-1], got[i], "strictly increasing within a process")
		}
		all = append(all, got...)
	}
	later := jobstore.NewJobID()
	assert.Greater(t, later, slices.Max(all), "an ID made after the children's sorts after theirs")
	all = append(all, later)

	seen := make(map[string]bool, len(all))
	for _, id := range all {
		require.NoError(t, jobstore.ValidateJobID(id))
		require.False(t, seen[id], "duplicate ID %s", id)
		seen[id] = true
	}
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		require.False(t, idTime(t, all[i]).Before(idTime(t, all[i-1])), "lexical order is time order: %s, %s", all[i-1], all[i])
	}
	assert.WithinDuration(t, time.Now(), idTime(t, later), time.Minute, "the time is now, in UTC")
}

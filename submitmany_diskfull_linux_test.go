package jobstore_test

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
)

// TestSubmitMany_DiskFullReturnsTheJobsMade submits a batch larger than a
// tiny tmpfs (16 pages, 32 inodes) can hold, with the disk partly filled
// by a different amount each round, so that it fills at several steps of
// several jobs: the error is ENOSPC and names specs[len(dirs)], the jobs
// returned are exactly the jobs in the root, each whole, and no build
// directory or temp file is left.
func TestSubmitMany_DiskFullReturnsTheJobsMade(t *testing.T) {
	mnt := mountTinyTmpfs(t, "size=64k,nr_inodes=32")
	made := map[int]bool{} // how many jobs a batch made before the disk was full
	for _, f := range []struct{ pages, inodes int }{{0, 0}, {0, 5}, {0, 11}, {3, 0}, {7, 2}, {11, 0}, {13, 0}} {
		t.Run(fmt.Sprintf("%d pages %d inodes", f.pages, f.inodes), func(t *testing.T) {
			root := partlyFullRoot(t, mnt, f.pages, f.inodes)

			specs := batchSpecs("job", 20) // more than 32 inodes hold
			dirs, err := jobstore.SubmitMany(root, specs)
			require.ErrorIs(t, err, syscall.ENOSPC)
			assert.NotErrorIs(t, err, jobstore.ErrExists)
			require.Less(t, len(dirs), len(specs))
			assert.Contains(t, errOf(t, err).Msg, fmt.Sprintf("specs[%d] of %d (job %s)", len(dirs), len(specs), specs[len(dirs)].ID),
				"the error names specs[len(dirs)]")
			made[len(dirs)] = true

			n := requireWholeList(t, root, dirIDs(dirs))
			assert.Equal(t, len(dirs), n, "the jobs in the root are the jobs returned")
			for i, d := range dirs {
				assert.Equal(t, specs[i].ID, d.ID(), "the jobs made are a prefix of the specs")
			}
			assert.Empty(t, hiddenDirs(t, root), "a build directory is left")
			requireNoTempFiles(t, root, "a full disk")
		})
	}
	t.Logf("jobs made before the disk was full, over the rounds: %v", made)
	require.GreaterOrEqual(t, len(made), 2, "every round filled the disk at the same job: %v", made)
}

package jobstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
)

// TestSubmit_DiskFullLeavesWholeJobsOnly fills a tiny tmpfs (16 pages, 16
// inodes) by a different amount of bytes or inodes each round, then submits
// jobs until one fails. Each failure must be ENOSPC and leave the root as it
// was (no job directory, no build directory, no temp file), so that List and
// ReconcileAll see whole jobs only; the rounds between them make the disk
// fill at several steps of Submit.
func TestSubmit_DiskFullLeavesWholeJobsOnly(t *testing.T) {
	mnt := mountTinyTmpfs(t, "size=64k,nr_inodes=16")
	type fill struct {
		pages, inodes int
	}
	var fills []fill
	for n := range 13 { // 3 inodes are taken: the mount, the root, the filler's directory
		fills = append(fills, fill{pages: n})
		if n > 0 {
			fills = append(fills, fill{inodes: n})
		}
	}
	steps := map[string]int{} // the failing step (Error.Op) -> failures
	failures := 0
	for _, f := range fills {
		t.Run(fmt.Sprintf("%d pages %d inodes", f.pages, f.inodes), func(t *testing.T) {
			root := partlyFullRoot(t, mnt, f.pages, f.inodes)
			var acked []string
			for i := 0; ; i++ {
				before := fileSnapshot(t, root)
				dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: fmt.Sprintf("job-%d", i), Kind: "render",
					Params: []byte(`{"scene": "a.blend", "frames": 48}`)})
				if err == nil {
					acked = append(acked, dir.ID())
					require.Less(t, i, 16, "16 inodes cannot hold this many jobs")
					continue
				}
				require.ErrorIs(t, err, syscall.ENOSPC, "the failing Submit")
				assert.NotErrorIs(t, err, jobstore.ErrExists)
				var je *jobstore.Error
				require.ErrorAs(t, err, &je)
				steps[je.Op]++
				failures++
				diff := slices.DeleteFunc(treeDiff(before, fileSnapshot(t, root)), func(d string) bool {
					return d == "new: .submit" // where Submit builds jobs: hiddenDirs says it holds none
				})
				assert.Empty(t, diff, "a failed Submit changed the root: %v", err)
				assert.Empty(t, hiddenDirs(t, root), "a failed Submit left its build directory")
				requireNoTempFiles(t, root, "a failed Submit")
				break
			}
			requireWholeJobs(t, root, acked)
		})
	}
	t.Logf("%d failed submits on a full disk, by failing step: %v", failures, steps)
	require.GreaterOrEqual(t, len(steps), 2, "the disk filled at one step of Submit only: %v", steps)
}

// partlyFullRoot makes the jobs root mnt/jobs on the tiny tmpfs mnt, with
// pages pages and inodes inodes of it taken by a filler, both removed at
// the end of the test.
func partlyFullRoot(t *testing.T, mnt string, pages, inodes int) string {
	t.Helper()
	root := filepath.Join(mnt, "jobs")
	require.NoError(t, os.Mkdir(root, 0o755))
	filler := filepath.Join(mnt, "filler")
	t.Cleanup(func() { require.NoError(t, os.RemoveAll(root)); require.NoError(t, os.RemoveAll(filler)) })
	require.NoError(t, os.Mkdir(filler, 0o755))
	fillPartly(t, filler, pages, inodes)
	return root
}

// fillPartly writes pages pages into one file and creates inodes empty
// files in dir.
func fillPartly(t *testing.T, dir string, pages, inodes int) {
	t.Helper()
	if pages > 0 {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "pages"), make([]byte, pages*fillChunk), 0o644))
	}
	for i := range inodes {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), nil, 0o644))
	}
}

// treeDiff names the paths that differ between two snapshots.
func treeDiff(before, after map[string]fileState) []string {
	var diff []string
	for p, st := range after {
		if was, ok := before[p]; !ok {
			diff = append(diff, "new: "+p)
		} else if was != st {
			diff = append(diff, "changed: "+p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			diff = append(diff, "gone: "+p)
		}
	}
	slices.Sort(diff)
	return diff
}

package jobview

import (
	"fmt"
	"os"
	"strings"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
)

// RootJobDirs returns the job directories under root, as jobstore.JobDirs
// finds them, and refuses a root that holds something but no job: a wrong
// path (a home directory, /tmp) must not look like a root of broken jobs.
//
// A job directory is a directory that holds job.json (readable or not). A
// root that holds nothing (apart from dot-names and index.json) is a valid,
// empty root. The refusal is an ErrNotJob error (exit code 3).
func RootJobDirs(op, root string) ([]jobstore.JobDir, error) {
	dirs, err := jobstore.JobDirs(root)
	if err != nil {
		return nil, remedy.WithCLIRemedy(err, "check the path: ROOT is the directory that holds the job directories")
	}
	for _, d := range dirs {
		if Exists(d.SpecPath()) {
			return dirs, nil
		}
	}
	des, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, de := range des {
		if !strings.HasPrefix(de.Name(), ".") && de.Name() != jobstore.IndexFile {
			n++
		}
	}
	if n == 0 {
		return dirs, nil
	}
	entries := "1 entry"
	if n != 1 {
		entries = fmt.Sprintf("%d entries", n)
	}
	return nil, remedy.WithCLIRemedy(&jobstore.Error{Op: op, Path: root, Sentinel: jobstore.ErrNotJob,
		Msg: fmt.Sprintf("holds no jobs: none of its %s is a job directory (a directory with %s)", entries, jobstore.SpecFile)},
		"give the directory that holds the job directories, the ROOT given to 'jobstore submit'")
}

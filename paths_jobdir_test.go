package jobstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jobLike makes dir look like a job that every writer would change: a
// job.json (of job "j"), status running with a free lock (Reconcile would
// mark it lost, Start take it over, RequestCancel write cancel.json) and an
// old temp file (SweepTemps would remove it). The records are written
// directly, as another tool could, since the library refuses such a dir.
func jobLike(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	spec := specAt("j", 0)
	spec.SchemaVersion = jobstore.JobSchemaVersion
	writeRecord(t, filepath.Join(dir, jobstore.SpecFile), spec)
	st := statusIn(jobstore.Running, 3)
	st.SchemaVersion = jobstore.StatusSchemaVersion
	writeRecord(t, filepath.Join(dir, jobstore.StatusFile), st)
	tempFile(t, dir, ".status.json17", 2*jobstore.DefaultSweepAge)
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(dir, old, old)) // a change of the directory's entries shows in the snapshot
}

// TestWriters_RefuseAJobDirThatIsNotAJobID calls every function that
// creates or changes a file in a job directory with a JobDir whose last
// element is not a job ID, each resolving to a directory that looks like a
// job: each must fail with ErrInvalid, Subject "job_id", naming the JobDir,
// before it touches anything (the tree is byte- and mtime-identical after).
func TestWriters_RefuseAJobDirThatIsNotAJobID(t *testing.T) {
	type place struct {
		name string
		// make returns the hostile JobDir and the directory whose whole tree
		// must not change ("" for the file system's root, watched by name).
		make func(t *testing.T) (dir jobstore.JobDir, watched string)
	}
	inTree := func(rel string, jobAt string) func(t *testing.T) (jobstore.JobDir, string) {
		return func(t *testing.T) (jobstore.JobDir, string) {
			tree := tempDir(t)
			jobLike(t, filepath.Join(tree, jobAt))
			require.NoError(t, os.MkdirAll(filepath.Join(tree, "j"), 0o755))
			return jobstore.JobDir(filepath.Join(tree, rel)), tree
		}
	}
	// filepath.Join would clean "..": the hostile paths are built by hand.
	raw := func(suffix string) func(t *testing.T) (jobstore.JobDir, string) {
		return func(t *testing.T) (jobstore.JobDir, string) {
			tree := tempDir(t)
			jobLike(t, tree)
			require.NoError(t, os.Mkdir(filepath.Join(tree, "j"), 0o755))
			return jobstore.JobDir(tree + suffix), tree
		}
	}
	inCwd := func(dir jobstore.JobDir) func(t *testing.T) (jobstore.JobDir, string) {
		return func(t *testing.T) (jobstore.JobDir, string) {
			tree := tempDir(t)
			jobLike(t, tree)
			t.Chdir(tree)
			return dir, tree
		}
	}
	// spelled is make's JobDir with suffix appended as written (filepath.Join
	// would clean it away).
	spelled := func(make func(t *testing.T) (jobstore.JobDir, string), suffix string) func(t *testing.T) (jobstore.JobDir, string) {
		return func(t *testing.T) (jobstore.JobDir, string) {
			dir, watched := make(t)
			return dir + jobstore.JobDir(suffix), watched
		}
	}
	places := []place{
		{"the file system's root", func(t *testing.T) (jobstore.JobDir, string) { return "/", "" }},
		{"the current directory, as .", inCwd(".")},
		{"the current directory, as the empty path", inCwd("")},
		{"a job's parent, as j/..", raw(string(filepath.Separator) + "j" + string(filepath.Separator) + "..")},
		// "dir/." and "dir/" name dir itself, whose name is checked.
		{"a dot-name, as .hidden/.", spelled(inTree(".hidden", ".hidden"), string(filepath.Separator)+".")},
		{"a name with a space, as a b/", spelled(inTree("a b", "a b"), string(filepath.Separator))},
		{"a dot-name (a hidden directory)", inTree(".hidden", ".hidden")},
		{"a name with a space", inTree("a b", "a b")},
		{"the directory in which Submit builds jobs", inTree(".submit", ".submit")},
		{"the root's index.json", inTree("index.json", "index.json")},
	}
	writers := []struct {
		name string
		call func(dir jobstore.JobDir) error
		// byID: the writer takes a root and an ID, not a JobDir; the ID is
		// what its error names.
		byID bool
	}{
		{"WriteSpec", func(dir jobstore.JobDir) error {
			return jobstore.WriteSpec(dir, jobstore.JobSpec{ID: "j", Kind: "test"})
		}, false},
		{"WriteStatus", func(dir jobstore.JobDir) error {
			return jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Succeeded, Seq: 9})
		}, false},
		{"RequestCancel", func(dir jobstore.JobDir) error {
			return jobstore.RequestCancel(dir, jobstore.CancelRequest{JobID: "j", Reason: "test"})
		}, false},
		{"LockJob", func(dir jobstore.JobDir) error {
			lk, err := jobstore.LockJob(dir)
			if err == nil {
				_ = lk.Unlock()
			}
			return err
		}, false},
		{"Start", func(dir jobstore.JobDir) error {
			r, err := jobstore.Start(dir)
			if err == nil {
				_ = r.Close()
			}
			return err
		}, false},
		{"Reconcile", func(dir jobstore.JobDir) error {
			_, err := jobstore.Reconcile(dir)
			return err
		}, false},
		{"SweepTemps", func(dir jobstore.JobDir) error {
			_, err := jobstore.SweepTemps(dir, 0)
			return err
		}, false},
		{"Submit", func(dir jobstore.JobDir) error {
			_, err := jobstore.Submit(filepath.Dir(string(dir)), jobstore.JobSpec{ID: filepath.Base(string(dir)), Kind: "test"})
			return err
		}, true},
	}
	for _, p := range places {
		for _, w := range writers {
			t.Run(p.name+"/"+w.name, func(t *testing.T) {
				dir, watched := p.make(t)
				var before map[string]fileState
				var rootBefore []string
				if watched == "" {
					rootBefore = names(t, "/")
					removeIfCreated(t, rootBefore)
				} else {
					before = snapshot(t, watched)
				}

				err := w.call(dir)

				e := errOf(t, err)
				assert.ErrorIs(t, err, jobstore.ErrInvalid)
				assert.Equal(t, "job_id", e.Subject, "%v", err)
				assert.NotEmpty(t, e.Remedy, "%v", err)
				named := fmt.Sprintf("%q", string(dir))
				if w.byID {
					named = fmt.Sprintf("%q", filepath.Base(string(dir)))
				}
				assert.Contains(t, err.Error(), named, "the error names the JobDir")
				if watched == "" {
					assert.Equal(t, rootBefore, names(t, "/"), "%s created something in /", w.name)
				} else {
					assert.Equal(t, before, snapshot(t, watched), "%s changed the tree", w.name)
				}
			})
		}
	}
}

// removeIfCreated removes, at cleanup, the records a writer that did not
// refuse JobDir("/") would have created there (the names not in before).
func removeIfCreated(t *testing.T, before []string) {
	t.Cleanup(func() {
		for _, name := range []string{jobstore.SpecFile, jobstore.StatusFile, jobstore.LockFile, jobstore.CancelFile} {
			if !slices.Contains(before, name) {
				_ = os.Remove(filepath.Join("/", name))
			}
		}
		des, _ := os.ReadDir("/")
		for _, de := range des {
			if jobstore.IsTempName(de.Name()) || strings.HasPrefix(de.Name(), ".run-") {
				_ = os.RemoveAll(filepath.Join("/", de.Name()))
			}
		}
	})
}

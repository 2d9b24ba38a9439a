package jobstore_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/axqua/jobstore"
)

// benchListJobs is how many job directories BenchmarkList reads.
const benchListJobs = 10_000

// BenchmarkList reads 10,000 job directories with List and with the
// sequential loop a caller would write by hand (os.ReadDir, then
// os.ReadFile + json.Unmarshal of job.json and status.json per job), in the
// same run and over the same files on the repo's disk:
//
//	go test -run '^$' -bench 'List$' -benchtime 5x -count 3 . | tee list.txt
//	benchstat -col /impl list.txt
//
// The files are in the page cache after the first pass: this measures the
// CPU side of a poller's list (syscalls, parsing), which is what List's
// workers spread over the cores.
func BenchmarkList(b *testing.B) {
	root := benchRoot(b, benchListJobs)
	b.Run("impl=baseline", func(b *testing.B) {
		for b.Loop() {
			des, err := os.ReadDir(root)
			if err != nil {
				b.Fatal(err)
			}
			specs := make([]jobstore.JobSpec, 0, len(des))
			statuses := make([]jobstore.JobStatus, 0, len(des))
			for _, de := range des {
				var spec jobstore.JobSpec
				var st jobstore.JobStatus
				dir := jobstore.JobDir(filepath.Join(root, de.Name()))
				readJSON(b, dir.SpecPath(), &spec)
				readJSON(b, dir.StatusPath(), &st)
				specs, statuses = append(specs, spec), append(statuses, st)
			}
			if len(specs) != benchListJobs || len(statuses) != benchListJobs {
				b.Fatal(len(specs), len(statuses))
			}
		}
	})
	b.Run("impl=jobstore", func(b *testing.B) {
		for b.Loop() {
			entries, err := jobstore.List(root)
			if err != nil {
				b.Fatal(err)
			}
			if len(entries) != benchListJobs || entries[0].Err != nil || entries[0].Status == nil {
				b.Fatal(len(entries), entries[0])
			}
		}
	})
}

func readJSON(b *testing.B, path string, v any) {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		b.Fatal(err)
	}
}

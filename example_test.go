package jobstore_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/axqua/jobstore"
)

// exampleRoot makes a jobs root for an example; the caller removes it.
func exampleRoot() string {
	root, err := os.MkdirTemp("", "jobstore-example-")
	if err != nil {
		log.Fatal(err)
	}
	return root
}

func ExampleWriteSpec() {
	root := exampleRoot()
	defer os.RemoveAll(root)

	dir, err := jobstore.DirFor(root, "render-42")
	if err != nil {
		log.Fatal(err)
	}
	spec := jobstore.JobSpec{ID: "render-42", Kind: "render", Params: json.RawMessage(`{"frames": 120}`)}
	if err := jobstore.WriteSpec(dir, spec); err != nil {
		log.Fatal(err)
	}

	// job.json is written once: a second submission under the same ID loses.
	err = jobstore.WriteSpec(dir, spec)
	fmt.Println(errors.Is(err, jobstore.ErrExists), errors.Is(err, fs.ErrExist))
	// Output: true true
}

func ExampleReadSpec() {
	root := exampleRoot()
	defer os.RemoveAll(root)

	dir, _ := jobstore.DirFor(root, "render-42")
	submitted := time.Date(2026, 11, 30, 9, 35, 40, 123456789, time.UTC)
	err := jobstore.WriteSpec(dir, jobstore.JobSpec{ID: "render-42", Kind: "render",
		Params: json.RawMessage(`{"frames": 120}`), SubmittedAt: submitted})
	if err != nil {
		log.Fatal(err)
	}

	spec, err := jobstore.ReadSpec(dir)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(spec.ID, spec.Kind, spec.SchemaVersion, string(spec.Params))
	fmt.Println(spec.SubmittedAt) // UTC, to the microsecond: the file's precision

	// A directory that is not there is not a job.
	_, err = jobstore.ReadSpec(jobstore.JobDir(filepath.Join(root, "nothing-here")))
	var e *jobstore.Error
	if errors.As(err, &e) {
		fmt.Println(errors.Is(err, jobstore.ErrNotJob), errors.Is(err, fs.ErrNotExist), e.Remedy)
	}
	// Output:
	// render-42 render 2 {"frames":120}
	// 2026-11-30 09:35:40.123456 +0000 UTC
	// true true check the path: no directory is there (a removed job leaves none)
}

func ExampleWriteStatus() {
	root := exampleRoot()
	defer os.RemoveAll(root)
	dir, _ := jobstore.DirFor(root, "render-42")
	if err := jobstore.WriteSpec(dir, jobstore.JobSpec{ID: "render-42", Kind: "render"}); err != nil {
		log.Fatal(err)
	}

	progress, exit := 1.0, 0
	err := jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Succeeded, Seq: 7, Progress: &progress,
		Message: "120 frames <ok> & done", ExitCode: &exit,
		UpdatedAt: time.Date(2026, 11, 30, 9, 35, 40, 123456000, time.UTC)})
	if err != nil {
		log.Fatal(err)
	}
	b, _ := os.ReadFile(dir.StatusPath())
	fmt.Print(string(b))
	// Output:
	// {
	//   "schema_version": 1,
	//   "job_id": "render-42",
	//   "state": "succeeded",
	//   "seq": 7,
	//   "progress": 1,
	//   "message": "120 frames <ok> & done",
	//   "updated_at": "2026-11-30T09:35:40.123456+00:00",
	//   "exit_code": 0
	// }
}

func ExampleReadStatus() {
	root := exampleRoot()
	defer os.RemoveAll(root)
	dir, _ := jobstore.DirFor(root, "render-42")
	if err := jobstore.WriteSpec(dir, jobstore.JobSpec{ID: "render-42", Kind: "render"}); err != nil {
		log.Fatal(err)
	}

	// Submitted, but nothing has run yet: no status, and no error.
	st, err := jobstore.ReadStatus(dir)
	fmt.Println(st == nil, err)

	p := 0.25
	if err := jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Seq: 1, Progress: &p, Message: "frame 30/120"}); err != nil {
		log.Fatal(err)
	}
	st, err = jobstore.ReadStatus(dir)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.JobID, st.State, st.Seq, *st.Progress, st.Message, st.State.Terminal())
	// Output:
	// true <nil>
	// render-42 running 1 0.25 frame 30/120 false
}

func ExampleReadJSONTolerant() {
	root := exampleRoot()
	defer os.RemoveAll(root)
	path := filepath.Join(root, "index.json")

	var index map[string]int
	found, err := jobstore.ReadJSONTolerant(path, &index)
	fmt.Println(found, err) // absent: not an error

	if err := jobstore.WriteJSONAtomic(path, map[string]int{"jobs": 3}); err != nil {
		log.Fatal(err)
	}
	found, err = jobstore.ReadJSONTolerant(path, &index)
	fmt.Println(found, err, index["jobs"])

	// What a writer that does not use WriteJSONAtomic can leave after a crash.
	if err := os.WriteFile(path, []byte(`{"jobs": `), 0o644); err != nil {
		log.Fatal(err)
	}
	_, err = jobstore.ReadJSONTolerant(path, &index, jobstore.WithRetries(2, 10*time.Millisecond))
	var e *jobstore.Error
	if errors.As(err, &e) {
		fmt.Println(errors.Is(err, jobstore.ErrCorrupt), e.Msg)
	}
	// Output:
	// false <nil>
	// true <nil> 3
	// true the JSON ends early at byte 9: looks like an interrupted write (truncated file), the same through 2 reads
}

func ExampleError() {
	root := exampleRoot()
	defer os.RemoveAll(root)
	dir, _ := jobstore.DirFor(root, "render-42")
	if err := jobstore.WriteSpec(dir, jobstore.JobSpec{ID: "render-42", Kind: "render"}); err != nil {
		log.Fatal(err)
	}

	// Match the kind with errors.Is, read the details with errors.As.
	p := 1.5
	err := jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Progress: &p})
	var e *jobstore.Error
	if errors.As(err, &e) {
		fmt.Println(errors.Is(err, jobstore.ErrInvalid), e.Subject, e.Found, e.Supported)
		fmt.Println(e.Remedy)
	}

	// Errors stand for the standard ones too, and unwrap to the OS error.
	err = jobstore.WriteStatus(jobstore.JobDir(filepath.Join(root, "gone")), jobstore.JobStatus{State: jobstore.Running})
	fmt.Println(errors.Is(err, jobstore.ErrNotJob), errors.Is(err, fs.ErrNotExist))
	err = jobstore.WriteJSONAtomic(filepath.Join(root, "no", "such", "dir.json"), 1)
	if errors.As(err, &e) {
		fmt.Println(e.Op, errors.Is(err, fs.ErrNotExist))
	}
	// Output:
	// true progress 1.5 a number within [0, 1]
	// correct the progress field
	// true true
	// open directory true
}

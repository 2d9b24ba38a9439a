package jobstore_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/prereq"
	"github.com/axqua/jobstore/internal/strace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The write protocol, syscall by syscall: a child process runs WriteStatus,
// WriteSpec and ReadStatus under strace, and the test reads the order of
// the file system calls they made.

// tracedSyscalls are the calls strace records: everything that creates,
// writes, syncs, names or unnames a file, plus newfstatat for the step
// markers (and pwrite64/ftruncate, so that an in-place writer would show),
// and fstat, which takes a record's size before it is read (and which an
// os.Root's check of the directory would make).
const tracedSyscalls = "openat,write,pwrite64,ftruncate,fsync,fdatasync,close,renameat,renameat2,linkat,unlinkat," +
	"newfstatat,fstat,fchmod,fchmodat,mkdir,mkdirat"

// maxWriteStatusSyscalls is the budget of file system calls that touch the
// job directory in one WriteStatus, 11:
//
//   - open the directory (O_DIRECTORY|O_NOFOLLOW: a job directory that is a
//     link is refused); this descriptor serves every later step;
//   - read the current status.json (openat, fstat, close; its read is not
//     traced), so that a record whose seq goes back, or that unfinishes a
//     finished job, is refused;
//   - renameio's O_CREAT|O_EXCL create of the temp file through
//     /proc/self/fd/N, the descriptor's own link (no second opening of the
//     directory, no os.Root and no check of one: the path names the
//     directory held, whatever its path names now);
//   - write, fsync, close the temp file; rename relative to the directory's
//     descriptor; fsync the directory; close it.
//
// A Run's writes skip the read: they compare status.json's identity with
// the file they last wrote instead (one newfstatat). The bare protocol
// (create, write, fsync, close, rename, open, fsync and close the
// directory) makes 8; the open by the descriptor and the read of the
// current record are the 3 beyond it.
const maxWriteStatusSyscalls = 11

// The steps the "protocol" child runs, in the order of $JOBSTORE_TRACE_STEPS.
// Each is bracketed by marker stats of <prefix>begin-<step> and, once it
// returned nil, <prefix>ack-<step>.
const (
	stepWriteStatus = "write-status" // over the status.json of tracedJobA
	stepWriteSpec   = "write-spec"   // in tracedJobB, which does not exist yet
	stepSubmit      = "submit"       // tracedJobC, which does not exist yet
	stepReadStatus  = "read-status"  // of tracedJobA
	// stepWriteStatusInPlace is not the library: the naive writer the
	// protocol exists to avoid (truncate, write, fsync), a control for the
	// power-loss model.
	stepWriteStatusInPlace = "write-status-in-place"
)

const (
	tracedJobA = "job-a"
	tracedJobB = "job-b"
	tracedJobC = "job-c"
)

// Env of the "protocol" child.
const (
	traceRootEnv  = "JOBSTORE_TRACE_ROOT"
	traceMarkEnv  = "JOBSTORE_TRACE_MARK"
	traceStepsEnv = "JOBSTORE_TRACE_STEPS"
)

var tracedT0 = time.Date(2026, 11, 30, 9, 35, 40, 123456000, time.UTC)

// tracedOldStatus and tracedNewStatus are the records of the traced steps: fixed, so that parent and child agree.
func tracedOldStatus() jobstore.JobStatus {
	return jobstore.JobStatus{State: jobstore.Queued, Seq: 1, UpdatedAt: tracedT0}
}

func tracedNewStatus() jobstore.JobStatus {
	p := 0.25
	return jobstore.JobStatus{State: jobstore.Running, Seq: 2, Progress: &p, Message: "rendering frame 12 of 48",
		UpdatedAt: tracedT0.Add(time.Second), StartedAt: &tracedT0, PID: 4242, Host: "render-7"}
}

func tracedSpec(id string) jobstore.JobSpec {
	return jobstore.JobSpec{ID: id, Kind: "render", Params: []byte(`{"scene":"a.blend","frames":48}`),
		SubmittedAt: tracedT0, SubmittedBy: "alice"}
}

func init() {
	roles["protocol"] = func() int {
		root, mark := os.Getenv(traceRootEnv), os.Getenv(traceMarkEnv)
		a, b := jobstore.JobDir(filepath.Join(root, tracedJobA)), jobstore.JobDir(filepath.Join(root, tracedJobB))
		for _, step := range strings.Split(os.Getenv(traceStepsEnv), ",") {
			_, _ = os.Lstat(mark + "begin-" + step)
			var err error
			switch step {
			case stepWriteStatus:
				err = jobstore.WriteStatus(a, tracedNewStatus())
			case stepWriteSpec:
				err = jobstore.WriteSpec(b, tracedSpec(tracedJobB))
			case stepSubmit:
				_, err = jobstore.Submit(root, tracedSpec(tracedJobC))
			case stepReadStatus:
				_, err = jobstore.ReadStatus(a)
			case stepWriteStatusInPlace:
				err = writeStatusInPlace(a, tracedNewStatus())
			default:
				err = fmt.Errorf("unknown step %q", step)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "protocol child: %s: %v\n", step, err)
				return 1
			}
			_, _ = os.Lstat(mark + "ack-" + step)
		}
		return 0
	}
}

func writeStatusInPlace(dir jobstore.JobDir, st jobstore.JobStatus) error {
	st.SchemaVersion, st.JobID = jobstore.StatusSchemaVersion, dir.ID()
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(dir.StatusPath(), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(data, '\n'))
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// protocolTrace is what one traced run of the "protocol" child left.
type protocolTrace struct {
	dir    string // holds root and the (never created) markers
	root   string // the job root: tracedJobA prepared by the parent, tracedJobB made by the child
	mark   string // marker path prefix
	events []strace.Event
}

// jobDir returns the path of a job dir of the run.
func (p *protocolTrace) jobDir(id string) string { return filepath.Join(p.root, id) }

// step returns the events of one step: after its begin marker, before its
// ack marker. A step that was not acknowledged fails the test.
func (p *protocolTrace) step(t testing.TB, step string) []strace.Event {
	t.Helper()
	begin, ack := -1, -1
	for i, e := range p.events {
		switch {
		case e.Name == "newfstatat" && e.Path == p.mark+"begin-"+step:
			begin = i
		case e.Name == "newfstatat" && e.Path == p.mark+"ack-"+step && begin >= 0:
			ack = i
		}
	}
	require.True(t, begin >= 0 && ack > begin, "no begin and ack markers for %s in the trace", step)
	return p.events[begin+1 : ack]
}

// prepareTracedRoot makes a job root holding tracedJobA with job.json and
// the old status.json, written (and synced) by the library itself.
func prepareTracedRoot(t testing.TB, root string) {
	t.Helper()
	a := jobstore.JobDir(filepath.Join(root, tracedJobA))
	require.NoError(t, jobstore.WriteSpec(a, tracedSpec(tracedJobA)))
	require.NoError(t, jobstore.WriteStatus(a, tracedOldStatus()))
}

// requireStrace skips the test where strace is missing or cannot trace.
func requireStrace(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("strace")
	if err != nil {
		prereq.Skip(t, "strace", "strace is not installed (apt-get install strace): the syscall-level protocol tests need it")
	}
	return path
}

// traceProtocol runs the "protocol" child under strace for steps, over a
// root that prepare fills first, and returns the calls it made under the
// run's directory.
func traceProtocol(t testing.TB, prepare func(root string), steps ...string) *protocolTrace {
	t.Helper()
	return traceProtocolAs(t, "protocol", prepare, steps...)
}

// traceProtocolAs is traceProtocol with the child role, which reads the
// same environment and marks its steps the same way.
func traceProtocolAs(t testing.TB, role string, prepare func(root string), steps ...string) *protocolTrace {
	t.Helper()
	straceBin := requireStrace(t)
	dir := tempDir(t)
	p := &protocolTrace{dir: dir, root: filepath.Join(dir, "root"), mark: filepath.Join(dir, "mark-")}
	require.NoError(t, os.Mkdir(p.root, 0o755))
	if prepare != nil {
		prepare(p.root)
	}
	logFile := filepath.Join(dir, "strace.log")
	child := childCommand(t, role, traceRootEnv+"="+p.root, traceMarkEnv+"="+p.mark,
		traceStepsEnv+"="+strings.Join(steps, ","))
	cmd, finish := toolCommand(toolTimeout, straceBin,
		append([]string{"-f", "-qq", "-s", "65536", "-e", "trace=" + tracedSyscalls, "-o", logFile, "--"}, child.Args...)...)
	cmd.Env = child.Env
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := finish(cmd.Run()); err != nil {
		if out := stderr.String(); strings.Contains(out, "ptrace") && strings.Contains(out, "Operation not permitted") {
			prereq.Skip(t, "strace", "strace cannot trace here (ptrace not permitted, e.g. a container without CAP_SYS_PTRACE): "+out)
		}
		t.Fatalf("traced child failed: %v\n%s", err, stderr.String())
	}
	log, err := os.ReadFile(logFile)
	require.NoError(t, err)
	calls, err := strace.Parse(string(log))
	require.NoError(t, err)
	p.events, err = strace.Resolve(calls, dir)
	require.NoError(t, err)
	return p
}

// traceStep is one expected call of a protocol, matched in order.
type traceStep struct {
	what  string
	match func(e strace.Event) bool
}

// requireInOrder finds each step after the previous one's match and returns
// the matched events.
func requireInOrder(t testing.TB, evs []strace.Event, steps []traceStep) []strace.Event {
	t.Helper()
	var found []strace.Event
	i := 0
	for _, s := range steps {
		j := slices.IndexFunc(evs[i:], s.match)
		if j < 0 {
			var done []string
			for _, f := range found {
				done = append(done, "\t"+f.Line)
			}
			t.Fatalf("protocol step %q not found after:\n%s\nwhole trace of the step:\n%s",
				s.what, strings.Join(done, "\n"), formatEvents(evs))
		}
		found = append(found, evs[i+j])
		i += j + 1
	}
	return found
}

func formatEvents(evs []strace.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "\t%s\n", e.Line)
	}
	return b.String()
}

// publishSteps is the protocol for one record at target: open target's
// directory read-only with O_NOFOLLOW (a job directory that is a link is
// refused); renameio's O_CREAT|O_EXCL create of a temp file through the
// descriptor's /proc/self/fd/N link; write, fsync, close; publish (a
// rename, or what publish accepts) relative to the directory's descriptor,
// and fsync the directory through it. tmp receives the temp file's path
// once it is matched.
func publishSteps(target string, tmp *string, publish traceStep) []traceStep {
	dirfd := new(string) // the directory's descriptor, as strace prints it
	return append([]traceStep{openDirStep(filepath.Dir(target), dirfd)}, recordSteps(target, tmp, publish, dirfd)...)
}

// openDirStep is the first step of publishSteps: open dir read-only with
// O_DIRECTORY|O_NOFOLLOW; dirfd receives its descriptor.
func openDirStep(dir string, dirfd *string) traceStep {
	return traceStep{"open the directory " + dir + " read-only, O_DIRECTORY|O_NOFOLLOW", func(e strace.Event) bool {
		if e.Name != "openat" || !e.OK() || e.Path != dir || strace.HasFlag(e.Flags, "O_CREAT") || !strace.HasFlag(e.Flags, "O_RDONLY") ||
			!strace.HasFlag(e.Flags, "O_DIRECTORY") || !strace.HasFlag(e.Flags, "O_NOFOLLOW") {
			return false
		}
		*dirfd = strconv.Itoa(e.FD)
		return true
	}}
}

// recordSteps are the steps of publishSteps after the directory's open,
// through its descriptor *dirfd.
func recordSteps(target string, tmp *string, publish traceStep, dirfd *string) []traceStep {
	return append(fileSteps(target, tmp, publish, dirfd), dirSyncStep(filepath.Dir(target), dirfd))
}

// dirSyncStep is the fsync of dir through its descriptor *dirfd.
func dirSyncStep(dir string, dirfd *string) traceStep {
	return traceStep{"fsync the directory " + dir + " through the same descriptor", func(e strace.Event) bool {
		return e.Name == "fsync" && e.OK() && e.Path == dir && strconv.Itoa(e.FD) == *dirfd
	}}
}

// fileSteps are recordSteps but the directory's fsync: the temp file
// created, written, fsynced, closed and published through *dirfd.
func fileSteps(target string, tmp *string, publish traceStep, dirfd *string) []traceStep {
	dir := filepath.Dir(target)
	on := func(name string, path *string) func(e strace.Event) bool {
		return func(e strace.Event) bool { return e.Name == name && e.OK() && e.Path == *path }
	}
	return []traceStep{
		{"create the temp file with O_CREAT|O_EXCL through the descriptor's /proc/self/fd link", func(e strace.Event) bool {
			base := filepath.Base(e.Path)
			if e.Name != "openat" || !e.OK() || e.Args[0] != "AT_FDCWD" || !strings.HasPrefix(e.Args[1], `"/proc/self/fd/`+*dirfd+`/`) ||
				filepath.Dir(e.Path) != dir || !jobstore.IsTempName(base) || !strings.HasPrefix(base, "."+filepath.Base(target)) ||
				!strace.HasFlag(e.Flags, "O_CREAT") || !strace.HasFlag(e.Flags, "O_EXCL") {
				return false
			}
			*tmp = e.Path
			return true
		}},
		{"write the temp file", on("write", tmp)},
		{"fsync the temp file", on("fsync", tmp)},
		{"close the temp file", on("close", tmp)},
		{publish.what + ", relative to the directory's descriptor", func(e strace.Event) bool {
			return publish.match(e) && e.Args[0] == *dirfd && e.Args[2] == *dirfd
		}},
	}
}

// requireBuiltJob checks the calls evs of a WriteSpec or Submit that made
// the new job directory dir under root, holding records (written in that
// order): open the root; open its .submit directory relative to the root's
// descriptor (O_NOFOLLOW); create a build directory in it and open it,
// both relative to .submit's descriptor (O_NOFOLLOW); write each
// record there with the write protocol (fileSteps: job.json published
// without replacing, status.json renamed; each file fsynced; the records
// written at once, so their steps may interleave); fsync the build
// directory once, after every record; rename it to dir's name with RENAME_NOREPLACE,
// from .submit's descriptor to the root's; fsync .submit and the root.
// Nothing else is fsynced: one fsync per record, then three directory
// fsyncs. dir itself never appears any other way.
func requireBuiltJob(t *testing.T, evs []strace.Event, root, dir string, records ...string) {
	t.Helper()
	i := slices.IndexFunc(evs, func(e strace.Event) bool {
		return (e.Name == "mkdirat" || e.Name == "mkdir") && e.OK() && filepath.Dir(e.Path) == filepath.Join(root, ".submit") &&
			strings.HasPrefix(filepath.Base(e.Path), filepath.Base(dir)+"-")
	})
	require.GreaterOrEqual(t, i, 0, "no hidden build directory made in the root:\n%s", formatEvents(evs))
	build := evs[i].Path
	rootfd, subfd := "", new(string)
	openSub := openDirStep(filepath.Join(root, ".submit"), subfd)
	steps := []traceStep{
		{"open the jobs root", func(e strace.Event) bool {
			if e.Name != "openat" || !e.OK() || e.Path != root || !strace.HasFlag(e.Flags, "O_DIRECTORY") {
				return false
			}
			rootfd = strconv.Itoa(e.FD)
			return true
		}},
		{openSub.what + ", relative to the root's descriptor", func(e strace.Event) bool {
			return openSub.match(e) && e.Args[0] == rootfd
		}},
		{"create the build directory relative to .submit's descriptor", func(e strace.Event) bool {
			return e.Name == "mkdirat" && e.OK() && e.Path == build && e.Args[0] == *subfd
		}},
	}
	buildfd := new(string)
	open := openDirStep(build, buildfd)
	openBuild := traceStep{open.what + ", relative to .submit's descriptor", func(e strace.Event) bool {
		return open.match(e) && e.Args[0] == *subfd
	}}
	steps = append(steps, openBuild)
	tmps := make([]string, len(records))
	var recordsSteps [][]traceStep // each record's, which may interleave with another's
	for k, name := range records {
		target := filepath.Join(build, name)
		publish := traceStep{"rename the temp file over " + name, func(e strace.Event) bool {
			return (e.Name == "renameat" || e.Name == "renameat2") && e.OK() && e.Path == tmps[k] && e.NewPath == target
		}}
		if name == jobstore.SpecFile {
			publish = traceStep{"publish job.json with renameat2(RENAME_NOREPLACE) or linkat", func(e strace.Event) bool {
				noReplace := e.Name == "renameat2" && strace.HasFlag(e.Flags, "RENAME_NOREPLACE") || e.Name == "linkat"
				return noReplace && e.OK() && e.Path == tmps[k] && e.NewPath == target
			}}
		}
		recordsSteps = append(recordsSteps, append(append([]traceStep{openBuild}, fileSteps(target, &tmps[k], publish, buildfd)...), dirSyncStep(build, buildfd)))
	}
	steps = append(steps, dirSyncStep(build, buildfd),
		traceStep{"rename the build directory to the job's name with renameat2(RENAME_NOREPLACE), from .submit's descriptor to the root's", func(e strace.Event) bool {
			return e.Name == "renameat2" && strace.HasFlag(e.Flags, "RENAME_NOREPLACE") && e.OK() && e.Path == build && e.NewPath == dir &&
				e.Args[0] == *subfd && e.Args[2] == rootfd
		}},
		dirSyncStep(filepath.Join(root, ".submit"), subfd),
		traceStep{"fsync the root through its descriptor", func(e strace.Event) bool {
			return e.Name == "fsync" && e.OK() && e.Path == root && strconv.Itoa(e.FD) == rootfd
		}})
	found := requireInOrder(t, evs, steps)
	for k, name := range records {
		requireInOrder(t, evs, recordsSteps[k])
		requireTempFileSettled(t, evs, tmps[k], filepath.Join(build, name))
	}
	var fsyncs []string
	for _, e := range evs {
		if (e.Name == "fsync" || e.Name == "fdatasync") && e.OK() {
			fsyncs = append(fsyncs, e.Line)
		}
	}
	assert.Len(t, fsyncs, len(records)+3, "fsyncs: one per record, the build directory, .submit and the root, each once:\n%s", formatEvents(evs))
	published := found[len(found)-3]
	for _, e := range evs {
		if e.Name == "renameat" && filepath.Base(e.NewPath) == jobstore.SpecFile {
			t.Errorf("job.json published by a replacing rename: %s", e.Line)
		}
		if e.OK() && e.Line != published.Line && e.Name != "newfstatat" && touches(e, dir) {
			t.Errorf("the job directory appears otherwise than by the build directory's rename: %s", e.Line)
		}
	}
}

// requireTempFileSettled checks what the order alone does not: every write
// of the temp file comes before its one fsync (never retried), and nothing
// writes the target in place.
func requireTempFileSettled(t testing.TB, evs []strace.Event, tmp, target string) {
	t.Helper()
	fsyncs, lastWrite, firstSync := 0, -1, -1
	for i, e := range evs {
		switch {
		case e.Path == tmp && (e.Name == "write" || e.Name == "pwrite64" || e.Name == "ftruncate"):
			lastWrite = i
		case e.Path == tmp && (e.Name == "fsync" || e.Name == "fdatasync") && e.OK(): // not one a signal interrupted
			fsyncs++
			if firstSync < 0 {
				firstSync = i
			}
		case e.Path == target && e.NewPath == "" && e.Name == "openat" &&
			(strace.HasFlag(e.Flags, "O_WRONLY") || strace.HasFlag(e.Flags, "O_RDWR") || strace.HasFlag(e.Flags, "O_TRUNC")):
			t.Errorf("the record is opened for writing in place: %s", e.Line)
		}
	}
	assert.Equal(t, 1, fsyncs, "the temp file must be fsynced exactly once:\n%s", formatEvents(evs))
	assert.Less(t, lastWrite, firstSync, "a write of the temp file after its fsync:\n%s", formatEvents(evs))
}

// touches reports whether e names a path in dir (or dir itself).
func touches(e strace.Event, dir string) bool {
	in := func(p string) bool { return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) }
	return in(e.Path) || in(e.NewPath)
}

// TestProtocol_SyscallBySyscall runs WriteStatus, WriteSpec and ReadStatus
// in a child process under strace and checks the file system calls they
// made, in order, ignoring the Go runtime's own (only calls that name a path
// in the job root, or use an fd opened on one, count).
func TestProtocol_SyscallBySyscall(t *testing.T) {
	p := traceProtocol(t, func(root string) { prepareTracedRoot(t, root) }, stepWriteStatus, stepWriteSpec, stepSubmit, stepReadStatus)

	t.Run("WriteStatus replaces through an fsynced temp file and fsyncs the directory", func(t *testing.T) {
		evs := p.step(t, stepWriteStatus)
		dir := p.jobDir(tracedJobA)
		target := filepath.Join(dir, jobstore.StatusFile)
		var tmp string
		requireInOrder(t, evs, publishSteps(target, &tmp, traceStep{"rename the temp file over status.json", func(e strace.Event) bool {
			return (e.Name == "renameat" || e.Name == "renameat2") && e.OK() && e.Path == tmp && e.NewPath == target
		}}))
		requireTempFileSettled(t, evs, tmp, target)

		var mine []strace.Event
		for _, e := range evs {
			if touches(e, dir) {
				mine = append(mine, e)
			}
		}
		assert.LessOrEqual(t, len(mine), maxWriteStatusSyscalls, "file syscalls in the job dir:\n%s", formatEvents(mine))
		opens := 0
		for _, e := range mine {
			if e.Name == "openat" && e.Path == dir {
				opens++
			}
		}
		assert.Equal(t, 1, opens, "the job directory is opened once, its descriptor serving every step:\n%s", formatEvents(mine))
		t.Logf("WriteStatus: %d file syscalls in the job dir:\n%s", len(mine), formatEvents(mine))
	})

	t.Run("WriteSpec builds the new job in a hidden directory, fsynced, then renames it into place without replacing", func(t *testing.T) {
		evs := p.step(t, stepWriteSpec)
		requireBuiltJob(t, evs, p.root, p.jobDir(tracedJobB), jobstore.SpecFile)
		t.Logf("WriteSpec (new job dir): %d file syscalls:\n%s", len(evs), formatEvents(evs))
	})

	t.Run("Submit builds the new job, job.json and status.json, in a hidden directory, then renames it into place", func(t *testing.T) {
		evs := p.step(t, stepSubmit)
		requireBuiltJob(t, evs, p.root, p.jobDir(tracedJobC), jobstore.SpecFile, jobstore.StatusFile)
		t.Logf("Submit: %d file syscalls:\n%s", len(evs), formatEvents(evs))
	})

	t.Run("ReadStatus writes, renames, chmods and removes nothing", func(t *testing.T) {
		evs := p.step(t, stepReadStatus)
		status := filepath.Join(p.jobDir(tracedJobA), jobstore.StatusFile)
		require.True(t, slices.ContainsFunc(evs, func(e strace.Event) bool {
			return e.Name == "openat" && e.OK() && e.Path == status
		}), "ReadStatus did not open status.json under trace:\n%s", formatEvents(evs))
		for _, e := range evs {
			switch e.Name {
			case "write", "pwrite64", "ftruncate", "renameat", "renameat2", "linkat", "unlinkat", "fchmod", "fchmodat",
				"mkdir", "mkdirat", "fsync", "fdatasync":
				t.Errorf("ReadStatus changed something: %s", e.Line)
			case "openat":
				for _, f := range []string{"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"} {
					if strace.HasFlag(e.Flags, f) {
						t.Errorf("ReadStatus opened for writing (%s): %s", f, e.Line)
					}
				}
			}
		}
		t.Logf("ReadStatus: %d file syscalls:\n%s", len(evs), formatEvents(evs))
	})
}

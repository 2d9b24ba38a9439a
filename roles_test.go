package jobstore_test

// roles are the bodies the test binary runs when it re-executes itself as a
// child process (childCommand, startRole): a writer to kill, a racing
// submitter, a reader in another process. A body's result is the child's
// exit code; its input is its environment and stdin, its answers are lines
// on stdout. Each body is defined beside the tests that use it.
//
// The roles that need their platform are added to this map by the file
// that defines them, in an init function:
//
//   - "protocol" (atomic_strace_linux_test.go): run the steps named in
//     $JOBSTORE_TRACE_STEPS between marker stats, for strace to record.
//   - permDeniedRole (tolerant_unix_test.go): drop to nobody and read a
//     file it may not read, reporting what ReadJSONTolerant said.
//   - windowsPollerRole (store_windows_test.go): poll status.json until
//     stdin closes, holding it open or reading it, and report the failures.
//   - fencedWriterRole (claim_twohost_linux_test.go): write through an
//     attempt, stop, and after being fenced write again, reporting the error.
//   - twoHostRunnerRole, twoHostStarterRole (twohost_linux_test.go): run or
//     race Start on a job through one mount of the two-host kit, as a host
//     named by JOBSTORE_HOST.
//   - pendingRunnerRole (progress_killed_runner_unix_test.go): start the job, write a
//     progress, leave another pending, wait to be killed.
//   - kitWorkerRole (twohost_worker_linux_test.go): run a Worker through
//     one mount of the two-host kit, its handler logging each attempt's
//     start and end outside the root, failing or holding some.
//   - workerLatencyRole (bench_worker_test.go): run a Worker whose handler
//     says when each job began, for BenchmarkWorkerLatency.
//   - twoHostCancellerRole, twoHostStartWaitRole
//     (cancel_twohost_linux_test.go): on a line of stdin, request a cancel
//     of, or Start, the jobs named in $JOBS through one mount.
var roles = map[string]func() int{
	// Runs and locks.
	"holder":            holder,          // start the job, hold its lock until stdin closes, then finish
	"racer":             racer,           // on a byte of stdin, start the job; say "won" or "locked"
	"runner":            runner,          // start the job, report progress, wait to be killed
	"reconciler":        reconciler,      // reconcile the job, say what it did
	"statuswriter":      statusWriter,    // run the job through N progress updates, then succeed
	"latencywriter":     latencyWriter,   // write status.json with the wall clock for each seq on stdin
	killWriterRole:      killWriter,      // rewrite status.json as fast as it can, acknowledging each seq, until killed
	tornReaderRole:      tornReader,      // read status.json without retries, report torn reads
	racerRole:           specRacer,       // race WriteSpec for the same job IDs against other racers
	"jobids":            jobIDs,          // print N new job IDs
	cancelRunnerRole:    cancelRunner,    // run each job named on stdin until its Context is done
	cancelHolderRole:    cancelHolder,    // start the job, then wait to be killed
	cancelRequesterRole: cancelRequester, // on a byte of stdin, request a cancel
	cancelFinisherRole:  cancelFinisher,  // race Finish(Succeeded) against the cancel request

}

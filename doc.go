// Package jobstore keeps job records on disk safely, for job runners that
// embed it and for the GUIs and tools (often not Go) that poll them.
//
// A job is a directory, <root>/<job-id>/, holding:
//
//	job.json     what was asked for (JobSpec): written once, then read-only
//	status.json  the runner's latest word (JobStatus): rewritten whole, polled by others
//	job.lock     held by the runner while it runs the job; names its holder
//	cancel.json  a request that the job stop (CancelRequest): written once, by anyone
//
// Two guarantees, one for each moment that matters:
//
//   - Writes are atomic and durable. A record is written to a temp file in
//     its own directory ("." + name + digits, see IsTempName), fsynced,
//     renamed over the old one, and the directory is fsynced. A writer that
//     crashes or fills the disk at any instant leaves the old record or the
//     new one, complete; a write that returned nil survives a power cut
//     (unless NoSync was asked for). Records never go backwards: a write
//     that would lower seq, or unfinish a finished job, is refused.
//   - Reads tolerate a torn moment. A reader that sees an incomplete file,
//     or a stale handle on a network filesystem, looks again for a bounded
//     time before it reports an error. A missing status.json is a normal
//     state, "nothing has run yet".
//
// Every record carries schema_version: an older record is migrated in memory
// and never rewritten by a reader; a newer one is refused with
// ErrNewerSchema, naming both versions. Below the root nothing is followed
// through a link, and a reader never blocks on a FIFO or a device
// (ErrNotRegular); a record is at most DefaultMaxSize (ErrTooLarge).
//
// The life of a job: Submit makes it whole or not at all (queued); Start,
// or StartNext for the oldest queued job of a root, gives a runner a Run,
// which writes running, coalesced Progress, and Finish; RequestCancel asks
// it to stop (Run.Context ends); Reconcile marks a job whose runner died
// lost; Remove and Prune take finished jobs out of the root, whole. Watch
// follows one job, WatchRoot every job of a root, Wait a job to its end, on
// file system events where the filesystem gives them and a poll where it
// does not; List reads a root and RebuildIndex caches it in index.json.
//
// Several hosts may share a root on NFS, SMB, CephFS or GlusterFS: where
// file locks do not reach across hosts, a runner owns its job by an attempt
// claimed with an exclusive mkdir, a lease it renews, and writes that a
// fence stops, so that one runner per job holds and a live runner is never
// marked lost, not even after a pause (it claims its job again, atomically).
// Another host's changes give no file system event; the polls cover them.
//
// Errors are *Error values: what went wrong, about what (Subject), what to do
// (Remedy), the cause (Unwrap) and the values found and supported. Match
// them with errors.Is against the sentinels (ErrNotJob, ErrExists,
// ErrCorrupt, ...) or the standard errors they stand for (fs.ErrNotExist,
// fs.ErrExist), or against the OS error (syscall.ENOSPC); ErrorCode names
// the kind as a stable string for scripts.
//
// Windows: the same protocol with MoveFileEx(REPLACE_EXISTING|WRITE_THROUGH);
// directories are not fsynced (Windows cannot), and a replace waits up to
// about 2 s for a reader that holds the file open without FILE_SHARE_DELETE.
// Every GOOS builds; on js/wasm, wasip1 and plan9 the file operations report
// errors.ErrUnsupported. The repository's README and docs/ describe the file
// format for other languages (with JSON Schemas and Python snippets), each
// platform, how every guarantee is tested, and the benchmarks.
package jobstore

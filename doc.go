// Package jobstore keeps job records on disk safely, for job runners that
// embed it and for the GUIs and tools (often not Go) that poll them.
//
// A job is a directory, <root>/<job-id>/, holding:
//
//	job.json     what was asked for (JobSpec): written once by WriteSpec, then read-only
//	status.json  the runner's latest word (JobStatus): rewritten whole by WriteStatus,
//	             polled by others about once a second with ReadStatus
//	job.lock     held by the runner while it writes status.json
//	cancel.json  a request that the job stop (CancelRequest): written once by
//	             RequestCancel or any tool, seen by the runner through Run.Context
//
// Temp files are siblings named "." + target + random digits (IsTempName);
// a directory scan must skip dot-names. On Unix, github.com/google/renameio/v2
// creates each one (its name, the exclusive create, a new name on a
// collision, the permissions) in an os.Root checked to be the directory the
// write opened without following a link.
//
// Two guarantees, one for each moment that matters:
//
//   - Writes are atomic and durable. A record is written to a temp file in
//     its own directory, fsynced, renamed over the old one, and the
//     directory is fsynced. A writer that crashes or fills the disk at any
//     instant leaves the old record or the new one, complete; never a
//     missing or partial file. A write that returned nil survives a power
//     cut (unless NoSync was asked for).
//   - Reads tolerate a torn moment. A reader (on NFS, say) that sees an
//     incomplete file looks again a few times before calling the record
//     corrupt. A missing status.json is a normal state, "nothing has run
//     yet", not an error.
//
// Schema versions: every record carries schema_version. An older record is
// migrated in memory on read and never rewritten by a reader; an equal one is
// read as it is; a newer one is refused with ErrNewerSchema, naming both
// versions.
//
// Around the records: Submit creates a job (job.json, then status queued);
// Start gives a runner a Run handle that holds job.lock and writes every
// update (Progress, SetMessage, Finish); Reconcile marks a job whose runner
// died (status running, lock free) as lost; List reads every job in
// parallel, and RebuildIndex caches the result in <root>/index.json.
//
// Errors are *Error values: what went wrong, about what (Subject), what to do
// (Remedy), the cause (Unwrap) and the values found and supported. Match
// them with errors.Is against the sentinels (ErrNotJob, ErrExists,
// ErrCorrupt, ...) or the standard errors they stand for (fs.ErrNotExist,
// fs.ErrExist), or against the OS error (syscall.ENOSPC).
//
// Windows: the same protocol with MoveFileEx(REPLACE_EXISTING|WRITE_THROUGH);
// directories are not fsynced (Windows cannot), and a replace waits up to
// about 2 s for a reader that holds the file open without FILE_SHARE_DELETE.
// NFS: rename is atomic for one client; with several, a reader may see a
// stale file for a few seconds (attribute caching), never a torn one from
// this package's writers.
//
// Files: the write protocol (temp file, write, fsync, close, publish,
// directory fsync) is written once in atomic.go, over the platform steps of
// atomic_unix.go and atomic_windows.go (the Windows replace, MoveFileEx and
// its retries, is in atomic_windows.go). The schema-version rule and the
// migration steps are in migrate.go; the error type, its sentinels and its
// constructors in errors.go; the tolerant reader in tolerant.go; job.lock in
// lock.go and lock_unix.go, lock_windows.go; the records in model.go and
// index.go; Submit and the Run handle in run.go; Reconcile in reconcile.go;
// List in list.go. The repository's README and docs/ describe the file
// format for other languages (docs/format.md, with JSON Schemas), the
// platforms, how each guarantee is tested, and the benchmarks.
package jobstore

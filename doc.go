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
// migrated in memory on read and never rewritten by a reader (DecodeSpec,
// DecodeStatus and DecodeCancel report that it was); an equal one is read as
// it is; a newer one is refused with ErrNewerSchema, naming both versions.
//
// Below the root, nothing is followed: a job directory that is a symbolic
// link, and a record or job.lock that is not a regular file, are
// ErrNotRegular; a reader never blocks on a FIFO or a device. Records are at
// most DefaultMaxSize; a writer refuses a larger one (ErrTooLarge) before
// touching anything.
//
// Around the records: Submit creates a job whole or not at all (job.json
// and status queued, written in a hidden directory of the root that is then
// renamed into place); Start gives a runner a Run handle that holds job.lock (which names its
// holder while held) and writes every update. Progress is coalesced: calls
// are kept in memory and at most one write per interval carries the latest
// (WithProgressInterval, Flush); SetMessage and Finish write at once,
// durably. StartNext gives a worker the Run of the oldest queued job of a
// root, waiting for one on file system events and a scan; Wait returns a
// job's final status. Watch follows a job's status.json through file system
// events, with a safety poll, all of a process's watches sharing one OS
// watcher; WatchRoot follows every job of a root the same way, polling with
// one stat per job directory where events do not tell everything.
// RequestCancel writes cancel.json, once, from any process; the runner sees
// it through Run.Context, and a queued job is cancelled at once. Reconcile
// marks a job whose runner died (status running, lock free) as lost, or
// cancelled when a request is pending; List reads every job in parallel, and
// RebuildIndex caches the result in <root>/index.json. Remove takes a
// finished job out of the root whole (one rename, after claiming its next
// attempt as a starter would), and Prune removes every job that finished
// long enough ago.
//
// Errors are *Error values: what went wrong, about what (Subject), what to do
// (Remedy), the cause (Unwrap) and the values found and supported. Match
// them with errors.Is against the sentinels (ErrNotJob, ErrExists,
// ErrCorrupt, ...) or the standard errors they stand for (fs.ErrNotExist,
// fs.ErrExist), or against the OS error (syscall.ENOSPC). ErrorCode names
// the kind as a stable string for scripts and JSON output.
//
// Windows: the same protocol with MoveFileEx(REPLACE_EXISTING|WRITE_THROUGH);
// directories are not fsynced (Windows cannot), and a replace waits up to
// about 2 s for a reader that holds the file open without FILE_SHARE_DELETE.
// NFS: rename is atomic for one client; with several, a reader may see a
// stale file for a few seconds (attribute caching), never a torn one from
// this package's writers; and a change made by another host gives no file
// system event, so Watch and Run.Context rely on their poll there. Every
// GOOS builds; on js/wasm, wasip1 and plan9 the file operations report
// errors.ErrUnsupported.
//
// Files: the write protocol (temp file, write, fsync, close, publish,
// directory fsync) is written once in atomic.go, over the platform
// primitives of atomic_unix.go, atomic_windows.go (MoveFileEx and its
// retries) and atomic_other.go (ErrUnsupported). The schema-version rule,
// each record's schema and decodeRecord are in migrate.go; the error type,
// its sentinels, its constructors and ErrorCode in errors.go; the tolerant
// reader in tolerant.go (tolerant_unix.go, tolerant_windows.go: opening
// without following or blocking); job IDs and paths in paths.go and
// jobid.go; job.lock and its holder record in lock.go (the file lock
// itself in internal/flock); the records in model.go and index.go;
// Submit and the Run handle in run.go, coalesced progress in progress.go;
// StartNext and its cache of job directories in next.go (their stamps in
// internal/dirstamp), Wait in wait.go; Watch in watch.go and WatchRoot in
// watchroot.go, over the process's one OS watcher in internal/fsevents;
// cancel.json in cancel.go; Reconcile in reconcile.go; SweepTemps in
// sweep.go; List
// in list.go; Remove and Prune in remove.go; ownership across hosts in ownership.go, with the claim in
// claim.go, the attempt directory a Run holds open in rundir_unix.go, the
// lease in lease.go, the fence in fence.go, the host identity in hostid.go
// and process liveness in internal/proc. The repository's README and docs/
// describe the file format for other languages (docs/format.md, with JSON
// Schemas), the platforms, how each guarantee is tested, and the
// benchmarks.
package jobstore

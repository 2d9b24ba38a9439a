// Command peers measures jobstore beside two durable job queues, river
// (PostgreSQL, synchronous_commit on) and asynq (Redis, appendfsync
// always), in one run whose rounds alternate the systems, so that a change
// of the machine's load reaches all of them alike.
//
// For each system it measures: enqueue of no-op jobs one at a time and in
// batches, the drain of the queued jobs by a worker running 1 and 8 at a
// time, the CPU time spent per drained job, and the latency from the call
// that enqueues a job to the start of its handler in an idle worker. Beside
// them it runs "floor": jobstore's layout made bare on the same disk (the
// creates, fsyncs, renames and removals of a Submit and of a Worker's
// Start and Finish, overlapped as a Worker overlaps them, with no reads,
// checks or looks), the most any code that keeps jobstore's records as
// they are could reach there, with its ratios to the peers in the same
// table. It also measures the fsync rate of the disk that holds jobstore's
// root (and says, on Linux, what file system that is and, for ext4,
// whether it has a journal), the ceiling that jobstore's fsyncs per job put
// on its rates one at a time, and the rate of a drained job's fsyncs made
// by as many jobs at once as a Worker at the parallel drain writes; and it
// prints how each of jobstore and floor drains at the parallel drain
// against at 1. With -floor-work it runs, for each duration D given, a
// "floor+D" whose drained jobs each spend D of one CPU in their start: the
// layout with D of code per job.
//
// run.sh starts the servers (from Debian's packages) with durable settings
// and runs this command; a peer whose server cannot be reached is skipped
// with one line. docs/benchmarks.md ("Beside river and asynq") has a run.
//
// This is a module of its own, so that the library never depends on the
// peers' clients.
package main

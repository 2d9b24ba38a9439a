// Package faulttest mounts a loopback FUSE filesystem with a fault layer:
// chosen operations (open, read, write, fsync, directory fsync, flush,
// rename) on chosen file names fail with chosen errnos, and every such call
// is counted. The tests beside it use it to prove what jobstore's write
// protocol does when the disk fails (fsync EIO is reported and never
// retried, the previous record stays intact, no temp file is left) and how
// its readers bear a network filesystem's stale file handles (ESTALE).
//
// It is a module of its own (with a replace to the root) so that go-fuse is
// a dependency of these tests only, never of jobstore's importers. It builds
// on Linux only; elsewhere the package is empty.
package faulttest

// Package faulttest mounts a loopback FUSE filesystem with a fault layer:
// chosen operations (write, fsync, directory fsync, flush, rename) on chosen
// file names fail with chosen errnos, and every such call is counted. The
// tests beside it use it to prove what jobstore's write protocol does when
// the disk fails: fsync EIO is reported and never retried, the previous
// record stays intact, no temp file is left.
//
// It is a module of its own (with a replace to the root) so that go-fuse is
// a dependency of these tests only, never of jobstore's importers. It builds
// on Linux only; elsewhere the package is empty.
package faulttest

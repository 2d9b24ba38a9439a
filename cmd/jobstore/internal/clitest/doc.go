// Package clitest holds the fixtures that the tests of the jobstore
// command and of its packages share: jobs made with the library, a
// buffer safe for a writer and a reader, polling with a hang guard, and
// reading Prometheus metrics.
package clitest

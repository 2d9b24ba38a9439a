//go:build !unix

package main

import (
	"errors"
	"time"
)

// newFloor has no flock(2) to lock job.lock with, as jobstore does on Unix.
func newFloor(string) (system, error) {
	return nil, errors.New("the bare layout locks job.lock with flock(2): Unix only")
}

// newFloorWithWork is newFloor's, with no flock(2) either.
func newFloorWithWork(parent string, _ time.Duration) (system, error) { return newFloor(parent) }

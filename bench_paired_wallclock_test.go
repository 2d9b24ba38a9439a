//go:build !unix

package jobstore_test

import "time"

// threadCPU reports -1: no thread CPU clock is read here, and the paired
// benchmarks report wall times alone.
func threadCPU() time.Duration { return -1 }

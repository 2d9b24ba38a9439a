//go:build race

package jobstore_test

// raceDetector: the tests run under -race, which makes CPU-bound loops
// (spinning readers) many times slower; long stress tests do less there.
const raceDetector = true

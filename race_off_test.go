//go:build !race

package jobstore_test

// raceDetector: see race_on_test.go.
const raceDetector = false

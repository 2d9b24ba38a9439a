//go:build !race

package jobstore_test

const raceEnabled = false

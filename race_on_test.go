//go:build race

package jobstore_test

// raceEnabled: the race detector slows every memory access about tenfold;
// the longest hammers run fewer rounds under it (and in full without it).
const raceEnabled = true

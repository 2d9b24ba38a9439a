package jobstore

import "testing"

// SubmitSteps are the steps after which createJob calls its seam, in
// order: see submitSeam.
var SubmitSteps = []string{"mkdir", SpecFile, StatusFile, "published", "indexed"}

// OnSweepStep runs f at each step of the sweep of a build directory for
// the rest of the test: see sweepSeam.
func OnSweepStep(t testing.TB, f func(step, path string)) {
	sweepSeam.Store(&f)
	t.Cleanup(func() { sweepSeam.Store(nil) })
}

// OnStartBegun runs f in every Start once its Run's lease renewer runs and
// before running is written, for the rest of the test: see startSeam.
func OnStartBegun(t testing.TB, f func(dir string)) {
	startSeam.Store(&f)
	t.Cleanup(func() { startSeam.Store(nil) })
}

// SetStartBegun is OnStartBegun for a child process of a test, which has
// no testing.TB: f runs for the rest of the process.
func SetStartBegun(f func(dir string)) { startSeam.Store(&f) }

// OnSubmitStep runs f after each step of every Submit (and WriteSpec of a
// new job) for the rest of the test: see submitSeam.
func OnSubmitStep(t testing.TB, f func(step, path string)) {
	submitSeam.Store(&f)
	t.Cleanup(func() { submitSeam.Store(nil) })
}

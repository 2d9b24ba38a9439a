// Package testdir gives tests a temporary directory that also works under
// Wine, for the jobstore module's own tests (it is internal: importers of
// jobstore never see it).
package testdir

import "testing"

// New is t.TempDir, except under Wine 8, whose os.RemoveAll fails ("Invalid
// function") and would fail every test at cleanup: there the directory is
// made by hand and removed bottom-up with os.Remove.
func New(t testing.TB) string {
	t.Helper()
	if !UnderWine() {
		return t.TempDir()
	}
	return wineTempDir(t)
}

package jobstore_test

import (
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSkips_ForAMissingPrerequisiteGoThroughPrereq: a test of the module
// that skips because something is missing (root, a tool, a device) does so
// through prereq.Skip, which names the command that runs every test and
// counts the skip for TestMain's summary, never with a bare t.Skip.
// internal/faulttest fails instead of skipping (see its TestMain).
func TestSkips_ForAMissingPrerequisiteGoThroughPrereq(t *testing.T) {
	bare := regexp.MustCompile(`\.Skipf?\(\s*"[^"]*(?i:not installed|needs root|as root|is missing|cannot mount|not permitted|no bash|pseudo-terminal)`)
	var found []string
	checked := 0
	require.NoError(t, filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (path == filepath.Join("internal", "faulttest") || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		checked++
		for _, m := range bare.FindAllString(string(readFile(t, path)), -1) {
			found = append(found, path+": "+m)
		}
		return nil
	}))
	require.Greater(t, checked, 100, "the module's test files were not found")
	assert.Empty(t, found, "skip through prereq.Skip(t, prerequisite, msg), which names the command that runs them all")
}

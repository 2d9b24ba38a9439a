package testdir

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"golang.org/x/sys/windows"
)

// UnderWine reports whether this Windows binary runs under Wine: Wine's
// ntdll exports wine_get_version, Windows' does not.
func UnderWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

func wineTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "jobstore-test-")
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	t.Cleanup(func() {
		var paths []string
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil {
				paths = append(paths, p)
			}
			return nil
		})
		sort.Sort(sort.Reverse(sort.StringSlice(paths))) // children before parents
		for _, p := range paths {
			_ = os.Chmod(p, 0o700) // read-only files (job.json) cannot be deleted
			if err := os.Remove(p); err != nil {
				t.Logf("cleanup under Wine: %v", err)
			}
		}
	})
	return dir
}

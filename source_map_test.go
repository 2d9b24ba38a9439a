package jobstore_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSourceMap keeps docs/source.md true: its tables name every non-test Go
// file of the root package and every package under internal/, once each,
// and nothing else.
func TestSourceMap(t *testing.T) {
	doc := string(readFile(t, filepath.Join("docs", "source.md")))
	// The first cell of a table row: | `name` | ...
	rows := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(doc, -1)
	var mapped []string
	for _, r := range rows {
		mapped = append(mapped, r[1])
	}

	var want []string
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			want = append(want, f)
		}
	}
	entries, err := os.ReadDir("internal")
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() {
			want = append(want, "internal/"+e.Name())
		}
	}
	require.NotEmpty(t, want)

	for _, name := range want {
		assert.Equal(t, 1, count(mapped, name), "docs/source.md should name %s once", name)
	}
	for _, name := range mapped {
		assert.Contains(t, want, name, "docs/source.md names %s, which is not a root Go file or an internal package", name)
	}
}

func count(names []string, name string) int {
	n := 0
	for _, s := range names {
		if s == name {
			n++
		}
	}
	return n
}

// TestSourceMap_OtherMeansNeitherUnixNorWindows keeps one meaning of _other in
// a file name: the build constraint !unix && !windows, and only that.
func TestSourceMap_OtherMeansNeitherUnixNorWindows(t *testing.T) {
	var others []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(name, "_other.go") || strings.HasSuffix(name, "_other_test.go") {
			others = append(others, path)
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, others, "the module has _other files (internal/fsys, internal/flock, ...)")
	for _, path := range others {
		src := string(readFile(t, path))
		line, _, _ := strings.Cut(src, "\n")
		assert.Equal(t, "//go:build !unix && !windows", line, "%s: _other means !unix && !windows", path)
	}
}

// A platform file is named for its platform or its mechanism, never for
// the set it is not (docs/source.md, "Platform files").
func TestSourceMap_PlatformFilesSayWhatTheyAre(t *testing.T) {
	notNamed := regexp.MustCompile(`_(no|not)(linux|unix|windows|darwin|bsd|flock|probe)(_test)?\.go$`)
	var found []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if notNamed.MatchString(d.Name()) {
			found = append(found, path)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, found, "platform files named for the set they are not")
}

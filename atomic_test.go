package jobstore_test

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteJSONAtomic_WritesIndentedJSONWithNewlineAndNoHTMLEscaping(t *testing.T) {
	path := filepath.Join(tempDir(t), "v.json")
	v := map[string]any{
		"html":  `<a href="x">Tom & Jerry</a>`,
		"list":  []int{1, 2},
		"empty": map[string]int{},
		"nested": map[string]any{
			"uni": "naïve ✓",
		},
	}
	require.NoError(t, jobstore.WriteJSONAtomic(path, v))
	want := `{
  "empty": {},
  "html": "<a href=\"x\">Tom & Jerry</a>",
  "list": [
    1,
    2
  ],
  "nested": {
    "uni": "naïve ✓"
  }
}
`
	assert.Equal(t, want, string(readFile(t, path)))
}

func TestWriteJSONAtomic_ReplacesTheWholeFile(t *testing.T) {
	dir := tempDir(t)
	path := filepath.Join(dir, "status.json")
	require.NoError(t, jobstore.WriteJSONAtomic(path, strings.Repeat("long ", 1000)))
	require.NoError(t, jobstore.WriteJSONAtomic(path, "short"))
	assert.Equal(t, "\"short\"\n", string(readFile(t, path)), "no tail of the longer record remains")
	assert.Equal(t, []string{"status.json"}, names(t, dir))
}

func TestWriteJSONAtomic_NoSyncStillReplacesAtomically(t *testing.T) {
	dir := tempDir(t)
	path := filepath.Join(dir, "status.json")
	require.NoError(t, jobstore.WriteJSONAtomic(path, map[string]int{"v": 1}))
	ino := inode(t, path)
	require.NoError(t, jobstore.WriteJSONAtomic(path, map[string]int{"v": 2}, jobstore.NoSync()))
	assert.Equal(t, "{\n  \"v\": 2\n}\n", string(readFile(t, path)))
	if ino != 0 {
		assert.NotEqual(t, ino, inode(t, path), "NoSync replaces the file by rename, never writes in place")
	}
	assert.Equal(t, []string{"status.json"}, names(t, dir))
}

// TestWriteJSONAtomic_FailureLeavesPreviousFileAndNoTemp tries failures at
// each stage a test running as root can still cause: before anything is
// touched (a value JSON cannot encode), at the temp file's creation (the
// directory is gone) and at the replace (the target is a directory).
func TestWriteJSONAtomic_FailureLeavesPreviousFileAndNoTemp(t *testing.T) {
	tests := []struct {
		name   string
		target func(dir string) string // the path to write; dir holds a previous record
		value  any
		op     string
		is     []error
	}{
		{"NaN", func(dir string) string { return filepath.Join(dir, "status.json") }, map[string]float64{"p": math.NaN()}, "marshal", []error{jobstore.ErrInvalid}},
		{"infinity", func(dir string) string { return filepath.Join(dir, "status.json") }, math.Inf(-1), "marshal", []error{jobstore.ErrInvalid}},
		{"channel", func(dir string) string { return filepath.Join(dir, "status.json") }, make(chan int), "marshal", []error{jobstore.ErrInvalid}},
		{"function", func(dir string) string { return filepath.Join(dir, "status.json") }, map[string]any{"f": func() {}}, "marshal", []error{jobstore.ErrInvalid}},
		{"directory missing", func(dir string) string { return filepath.Join(dir, "gone", "status.json") }, 1, "open directory", []error{fs.ErrNotExist}},
		{"target is a directory", func(dir string) string {
			p := filepath.Join(dir, "sub")
			require.NoError(t, os.Mkdir(p, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(p, "keep"), []byte("x"), 0o644))
			return p
		}, 1, "rename", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tempDir(t)
			require.NoError(t, jobstore.WriteJSONAtomic(filepath.Join(dir, "status.json"), map[string]string{"old": "record"}))
			path := tt.target(dir)
			before := fileSnapshot(t, dir)

			err := jobstore.WriteJSONAtomic(path, tt.value)
			e := errOf(t, err)
			assert.Equal(t, tt.op, e.Op, "the error names the failed step: %v", err)
			assert.Contains(t, []string{path, filepath.Dir(path)}, filepath.Clean(e.Path))
			for _, target := range tt.is {
				assert.ErrorIs(t, err, target)
			}
			if tt.op != "marshal" {
				assert.NotNil(t, e.Unwrap(), "an I/O failure unwraps to the OS error")
			}
			assert.NotEmpty(t, e.Remedy)
			assert.Equal(t, before, fileSnapshot(t, dir), "the previous record is byte-identical and no temp file is left")
			requireNoTempFiles(t, filepath.Dir(path))
		})
	}
}

package jobstore_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// untouched is what a decode target holds before a read that must not
// change it.
var untouched = map[string]any{"untouched": true}

func TestReadJSONTolerant_AbsentFileIsNotFoundWithoutError(t *testing.T) {
	dir := tempDir(t)
	for _, path := range []string{filepath.Join(dir, "status.json"), filepath.Join(dir, "no", "such", "status.json")} {
		v := map[string]any{"untouched": true}
		found, err := jobstore.ReadJSONTolerant(path, &v)
		assert.False(t, found)
		assert.NoError(t, err)
		assert.Equal(t, untouched, v)
	}
}

func TestReadJSONTolerant_ReadsOneJSONValue(t *testing.T) {
	path := filepath.Join(tempDir(t), "v.json")
	writeFile(t, path, []byte("  {\"a\": [1, \"<&>\"]}\n\n"))
	var v map[string]any
	found, err := jobstore.ReadJSONTolerant(path, &v)
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, map[string]any{"a": []any{1.0, "<&>"}}, v)
}

// damaged lists what a crash, a foreign writer or a bad disk leaves in a
// record file, and how the ErrCorrupt message must name it (issue 3, item
// 9): "interrupted write" for what a crash leaves, "not JSON at all" for the
// rest.
var damaged = []struct {
	name   string
	data   []byte
	phrase string // in the message
}{
	{"empty", nil, "the file is empty: looks like an interrupted write"},
	{"NUL-filled", make([]byte, 4096), "only NUL bytes (4096): looks like an interrupted write"},
	{"NUL tail", append([]byte(`{"schema_version": 1, "state": "run`), make([]byte, 100)...), "ends in 100 NUL bytes: looks like an interrupted write"},
	{"truncated", []byte(`{"schema_version": 1, "job_id": "j1", "sta`), "ends early at byte 42: looks like an interrupted write (truncated file)"},
	{"truncated after a newline", []byte("{\n  \"schema_version\": 1,\n"), "looks like an interrupted write (truncated file)"},
	{"truncated to one brace", []byte("{"), "looks like an interrupted write"},
	{"garbage", []byte("hello, world\n"), "not JSON at all (byte 1 of 13)"},
	{"HTML error page", []byte("<html><body>502 Bad Gateway</body></html>"), "not JSON at all"},
	{"binary", []byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0}, "not JSON at all"},
	{"two values", []byte("{}{}"), "not one JSON value: more data follows the value that ends at byte 2"},
	{"value then junk", []byte("{\"a\": 1}\n}\n"), "not one JSON value"},
	{"value then NULs", append([]byte("{}"), 0, 0), "ends in 2 NUL bytes: looks like an interrupted write"},
	{"whitespace only", []byte(" \n"), "looks like an interrupted write"},
}

func TestReadJSONTolerant_DamageIsErrCorruptAndNamedAsSuch(t *testing.T) {
	for _, tt := range damaged {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(tempDir(t), "status.json")
			writeFile(t, path, tt.data)
			v := map[string]any{"untouched": true}
			found, err := jobstore.ReadJSONTolerant(path, &v, jobstore.WithRetries(3, 0))
			assert.True(t, found)
			assert.ErrorIs(t, err, jobstore.ErrCorrupt)
			e := errOf(t, err)
			assert.Contains(t, e.Msg, tt.phrase)
			assert.Contains(t, e.Msg, "the same through 3 reads")
			if !strings.Contains(tt.phrase, "interrupted") {
				assert.NotContains(t, e.Msg, "interrupted", "only crash damage is called an interrupted write")
			}
			assert.Equal(t, path, e.Path)
			assert.Equal(t, len(tt.data), e.Found, "Found is the file's size")
			assert.NotEmpty(t, e.Remedy)
			assert.NotNil(t, e.Unwrap(), "the JSON syntax error is the cause")
			assert.Equal(t, untouched, v, "v is only written by a decode of valid JSON")
		})
	}
}

func TestReadStatus_DamageIsErrCorruptNamedAsSuch(t *testing.T) {
	for _, tt := range damaged {
		t.Run(tt.name, func(t *testing.T) {
			dir := newJob(t, "damaged")
			writeFile(t, dir.StatusPath(), tt.data)
			st, err := jobstore.ReadStatus(dir, jobstore.WithRetries(2, 0))
			assert.Nil(t, st)
			assert.ErrorIs(t, err, jobstore.ErrCorrupt)
			assert.Contains(t, err.Error(), tt.phrase)
			assert.Contains(t, err.Error(), dir.StatusPath())
		})
	}
}

func TestReadJSONTolerant_DirectoryIsAnErrorNotCorruption(t *testing.T) {
	path := filepath.Join(tempDir(t), "status.json")
	require.NoError(t, os.Mkdir(path, 0o755))
	var v any
	found, err := jobstore.ReadJSONTolerant(path, &v)
	assert.True(t, found)
	e := errOf(t, err)
	assert.NotErrorIs(t, err, jobstore.ErrCorrupt)
	assert.Contains(t, e.Msg, "is a directory")
	assert.Equal(t, path, e.Path)
	assert.NotEmpty(t, e.Remedy)
}

func TestReadJSONTolerant_OverTheSizeLimitIsErrTooLarge(t *testing.T) {
	path := filepath.Join(tempDir(t), "big.json")
	data := []byte(`"` + strings.Repeat("x", 98) + `"`) // 100 bytes
	writeFile(t, path, data)

	var s string
	_, err := jobstore.ReadJSONTolerant(path, &s, jobstore.WithMaxSize(100))
	require.NoError(t, err, "a file of exactly the limit is read")

	s = "untouched"
	found, err := jobstore.ReadJSONTolerant(path, &s, jobstore.WithMaxSize(99))
	assert.True(t, found)
	assert.ErrorIs(t, err, jobstore.ErrTooLarge)
	assert.NotErrorIs(t, err, jobstore.ErrCorrupt)
	e := errOf(t, err)
	assert.Equal(t, int64(100), e.Found)
	assert.Equal(t, int64(99), e.Supported)
	assert.Equal(t, "untouched", s)

	// The default limit is 16 MiB.
	huge := filepath.Join(tempDir(t), "huge.json")
	writeFile(t, huge, bytes.Repeat([]byte(" "), jobstore.DefaultMaxSize+1))
	_, err = jobstore.ReadJSONTolerant(huge, &s)
	assert.ErrorIs(t, err, jobstore.ErrTooLarge)
}

func TestReadJSONTolerant_ValidJSONOfTheWrongShapeIsErrInvalid(t *testing.T) {
	path := filepath.Join(tempDir(t), "v.json")
	writeFile(t, path, []byte(`{"count": "seven"}`))
	var v struct {
		Count int `json:"count"`
	}
	found, err := jobstore.ReadJSONTolerant(path, &v)
	assert.True(t, found)
	assert.ErrorIs(t, err, jobstore.ErrInvalid)
	assert.NotErrorIs(t, err, jobstore.ErrCorrupt)
	assert.Equal(t, "count", errOf(t, err).Subject)
}

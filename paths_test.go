package jobstore_test

import (
	"errors"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidateJobID_AcceptsOnlySafePortableNames(t *testing.T) {
	tests := []struct {
		name string
		id   string
		ok   bool
	}{
		{"letters", "abc", true},
		{"one character", "a", true},
		{"one digit", "7", true},
		{"all allowed characters", "Az09._-", true},
		{"dot inside", "render.v2", true},
		{"dash inside", "job-1", true},
		{"underscore first", "_job", true},
		{"ends with dot", "job.", false},
		{"device name with extension inside", "con.v2.txt", false},
		{"device-like but longer", "CONSOLE", true},
		{"device-like with letter", "COMX", true},
		{"device-like with two digits", "LPT10", true},
		{"device name after a prefix", "my-aux", true},
		{"index.json with suffix", "index.json2", true},
		{"128 characters", strings.Repeat("a", 128), true},
		{"129 characters", strings.Repeat("a", 129), false},
		{"empty", "", false},
		{"leading dot", ".hidden", false},
		{"leading dash", "-rf", false},
		{"dot", ".", false},
		{"dot dot", "..", false},
		{"slash", "a/b", false},
		{"backslash", `a\b`, false},
		{"parent escape", "../etc", false},
		{"space", "a b", false},
		{"colon", "C:job", false},
		{"star", "job*", false},
		{"NUL", "a\x00b", false},
		{"newline", "a\n", false},
		{"unicode letter", "jöb", false},
		{"unicode digit", "job٣", false},
		{"emoji", "job🙂", false},
		{"128 bytes of which one multibyte", strings.Repeat("a", 126) + "é", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := jobstore.ValidateJobID(tt.id)
			if tt.ok {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, jobstore.ErrInvalid)
			var e *jobstore.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "job_id", e.Subject)
			assert.Equal(t, tt.id, e.Found)
			assert.NotEmpty(t, e.Supported)
			assert.NotEmpty(t, e.Remedy)
		})
	}
}

// TestValidateJobID_RefusesReservedAndWindowsNames: names that Windows
// cannot create, that Windows changes, and the root's own files are refused,
// in any case, with the reason in the message.
func TestValidateJobID_RefusesReservedAndWindowsNames(t *testing.T) {
	tests := []struct{ id, reason string }{
		{"index.json", "name of the root's index.json"},
		{"INDEX.JSON", "name of the root's index.json"},
		{"Index.Json", "name of the root's index.json"},
		{"job.", "ends with '.'"},
		{"job..", "ends with '.'"},
		{"a.b.", "ends with '.'"},
	}
	for _, dev := range []string{"CON", "PRN", "AUX", "NUL"} {
		tests = append(tests,
			struct{ id, reason string }{dev, "Windows device name"},
			struct{ id, reason string }{strings.ToLower(dev), "Windows device name"},
			struct{ id, reason string }{dev[:1] + strings.ToLower(dev[1:]) + ".txt", "Windows device name"})
	}
	for d := '0'; d <= '9'; d++ {
		for _, dev := range []string{"COM", "LPT"} {
			tests = append(tests,
				struct{ id, reason string }{dev + string(d), "Windows device name"},
				struct{ id, reason string }{strings.ToLower(dev) + string(d) + ".log", "Windows device name"})
		}
	}
	tests = append(tests, struct{ id, reason string }{"aux.tar.gz", "Windows device name"})
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			err := jobstore.ValidateJobID(tt.id)
			require.ErrorIs(t, err, jobstore.ErrInvalid)
			var e *jobstore.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "job_id", e.Subject)
			assert.Equal(t, tt.id, e.Found)
			assert.Contains(t, e.Msg, tt.reason)
			assert.Contains(t, e.Msg, strconv.Quote(tt.id), "the message names the ID")

			_, err = jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: tt.id, Kind: "test"})
			assert.ErrorIs(t, err, jobstore.ErrInvalid, "Submit refuses it too")
		})
	}
}

func TestValidateJobID_MessageSaysWhatIsWrong(t *testing.T) {
	tests := []struct{ id, want string }{
		{"", "is empty"},
		{strings.Repeat("x", 129), "129 characters long, more than 128"},
		{".x", `starts with '.'`},
		{"-x", `starts with '-'`},
		{"a/b", `'/' at byte 1`},
		// A character of several bytes is shown whole, at the byte it starts.
		{"café", `"café" has the character 'é' at byte 3`},
		{"日本", `"日本" has the character '日' at byte 0`},
		{"caf\xe9", `has the byte 0xe9 (not UTF-8) at byte 3`},
		{strings.Repeat("é", 100), `has the character 'é' at byte 0`}, // 200 bytes, 100 characters
	}
	for _, tt := range tests {
		err := jobstore.ValidateJobID(tt.id)
		require.Error(t, err, "id %q", tt.id)
		assert.Contains(t, err.Error(), tt.want, "id %q", tt.id)
	}
}

func TestDirFor_JoinsValidIDAndRefusesOthers(t *testing.T) {
	root := filepath.Join("srv", "jobs")
	dir, err := jobstore.DirFor(root, "job-1")
	require.NoError(t, err)
	assert.Equal(t, jobstore.JobDir(filepath.Join(root, "job-1")), dir)
	assert.Equal(t, "job-1", dir.ID())

	for _, id := range []string{"", "..", ".", "../x", "a/b", "-x", strings.Repeat("a", 129)} {
		dir, err := jobstore.DirFor(root, id)
		assert.ErrorIs(t, err, jobstore.ErrInvalid, "id %q", id)
		assert.Empty(t, dir, "id %q: no path for an invalid ID", id)
	}
}

func TestJobDir_NamesTheThreeFiles(t *testing.T) {
	dir := jobstore.JobDir(filepath.Join("root", "j1"))
	assert.Equal(t, filepath.Join("root", "j1", "job.json"), dir.SpecPath())
	assert.Equal(t, filepath.Join("root", "j1", "status.json"), dir.StatusPath())
	assert.Equal(t, filepath.Join("root", "j1", "job.lock"), dir.LockPath())
	assert.Equal(t, jobstore.SpecFile, filepath.Base(dir.SpecPath()))
	assert.Equal(t, jobstore.StatusFile, filepath.Base(dir.StatusPath()))
	assert.Equal(t, jobstore.LockFile, filepath.Base(dir.LockPath()))
}

func TestIsTempName_RecognisesOnlyTempSiblings(t *testing.T) {
	yes := []string{".status.json8674665223082153551", ".job.json1", ".index.json42",
		filepath.Join("a", "b", ".status.json123")}
	no := []string{"status.json", "job.json", ".status.json", ".status.jsonx1", ".status.json12a",
		".status.json.tmp", "status.json123", ".other.json123", ".job.lock123", ""}
	for _, n := range yes {
		assert.True(t, jobstore.IsTempName(n), n)
	}
	for _, n := range no {
		assert.False(t, jobstore.IsTempName(n), n)
	}
	// A job ID can never be taken for a temp file: IDs cannot start with '.'.
	assert.True(t, errors.Is(jobstore.ValidateJobID(".status.json1"), jobstore.ErrInvalid))
}

// TestJobDir_IDIsTheLastElementHoweverSpelled: a trailing separator or "."
// element does not change the ID; ".." is not taken for the element before
// it; on Windows '\' separates as '/' does.
func TestJobDir_IDIsTheLastElementHoweverSpelled(t *testing.T) {
	cases := []struct{ dir, id string }{
		{"root/j", "j"},
		{"root/j/", "j"},
		{"root/j//", "j"},
		{"root/j/.", "j"},
		{"root/j/./", "j"},
		{"root/j/././/.", "j"},
		{"j/", "j"},
		{"root/j.", "j."},
		{"root/j/..", ".."},
		{".", "."},
		{"", "."},
		{"/", "/"},
	}
	if runtime.GOOS == "windows" {
		cases = append(cases, []struct{ dir, id string }{
			{`C:\root\j\`, "j"},
			{`C:\root\j\.`, "j"},
			{`C:\root\j/.\`, "j"},
			{`\\server\share\j\.`, "j"},
			{`C:\root\j\..`, ".."},
		}...)
	}
	for _, c := range cases {
		t.Run(strconv.Quote(c.dir), func(t *testing.T) {
			dir, id := c.dir, c.id
			if runtime.GOOS == "windows" {
				dir, id = filepath.FromSlash(dir), filepath.FromSlash(id)
			}
			assert.Equal(t, id, jobstore.JobDir(dir).ID())
		})
	}
}

// TestJobDir_EverySpellingNamesTheSameJob: "root/j/", "root/j//" and
// "root/j/." reach the job root/j for every writer and reader, and
// WriteSpec of "root/k/" makes root/k (not root/k/k).
func TestJobDir_EverySpellingNamesTheSameJob(t *testing.T) {
	sep := string(filepath.Separator)
	spellings := []string{"", sep, sep + sep, sep + ".", sep + "." + sep}
	if sep != "/" {
		spellings = append(spellings, "/", "/.")
	}
	root := tempDir(t)
	j := writeJob(t, root, specAt("j", 0), nil)
	for i, spelling := range spellings {
		t.Run(strconv.Quote("j"+spelling), func(t *testing.T) {
			dir := jobstore.JobDir(string(j) + spelling)
			assert.Equal(t, "j", dir.ID())
			st := jobstore.JobStatus{State: jobstore.Queued, Seq: uint64(i + 1)}
			require.NoError(t, jobstore.WriteStatus(dir, st))
			got, err := jobstore.ReadStatus(dir)
			require.NoError(t, err)
			assert.Equal(t, uint64(i+1), got.Seq)
			assert.Equal(t, uint64(i+1), readStatus(t, j).Seq, "written in root/j")
			spec, err := jobstore.ReadSpec(dir)
			require.NoError(t, err)
			assert.Equal(t, "j", spec.ID)
			c, err := jobstore.ReadCancel(dir)
			require.NoError(t, err)
			assert.Nil(t, c)
			lk, err := jobstore.LockJob(dir)
			require.NoError(t, err)
			require.NoError(t, lk.Unlock())
		})
		t.Run(strconv.Quote("k"+spelling)+"/WriteSpec", func(t *testing.T) {
			id := "k" + strconv.Itoa(i)
			dir := jobstore.JobDir(filepath.Join(root, id) + spelling)
			require.NoError(t, jobstore.WriteSpec(dir, jobstore.JobSpec{ID: id, Kind: "k"}))
			spec, err := jobstore.ReadSpec(jobstore.JobDir(filepath.Join(root, id)))
			require.NoError(t, err)
			assert.Equal(t, id, spec.ID)
			assert.NoDirExists(t, filepath.Join(root, id, id))
		})
	}
}

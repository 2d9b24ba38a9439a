package strace

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseStrace_ReadsTheLinesTheTestsNeed(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		want      []Call
	}{
		{
			name: "openat with flags and mode",
			log:  `7 openat(AT_FDCWD, "/r/j/.status.json123", O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC, 0644) = 5`,
			want: []Call{{PID: 7, Name: "openat", Ret: 5,
				Args: []string{"AT_FDCWD", `"/r/j/.status.json123"`, "O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC", "0644"}}},
		},
		{
			name: "failed call",
			log:  `7 newfstatat(AT_FDCWD, "/m/x", 0xc000, AT_SYMLINK_NOFOLLOW) = -1 ENOENT (No such file or directory)`,
			want: []Call{{PID: 7, Name: "newfstatat", Ret: -1, Errno: "ENOENT",
				Args: []string{"AT_FDCWD", `"/m/x"`, "0xc000", "AT_SYMLINK_NOFOLLOW"}}},
		},
		{
			name: "struct and string holding commas, quotes and parentheses",
			log:  `7 newfstatat(AT_FDCWD, "/a, \"b\" (c)", {st_mode=S_IFREG|0644, st_size=82, ...}, 0) = 0`,
			want: []Call{{PID: 7, Name: "newfstatat", Ret: 0,
				Args: []string{"AT_FDCWD", `"/a, \"b\" (c)"`, "{st_mode=S_IFREG|0644, st_size=82, ...}", "0"}}},
		},
		{
			name: "unfinished and resumed across threads, signal and exit lines skipped",
			log: "7 fsync(5 <unfinished ...>\n" +
				"8 --- SIGURG {si_signo=SIGURG, si_code=SI_TKILL, si_pid=7, si_uid=0} ---\n" +
				"8 close(3) = 0\n" +
				"7 <... fsync resumed>) = 0\n" +
				"7 write(1, \"x\", 1 <unfinished ...>\n" +
				"7 <... write resumed>) = ?\n" +
				"7 +++ exited with 0 +++\n" +
				"9 ???( <detached ...>\n",
			want: []Call{
				{PID: 8, Name: "close", Ret: 0, Args: []string{"3"}},
				{PID: 7, Name: "fsync", Ret: 0, Args: []string{"5"}},
				{PID: 7, Name: "write", Ret: -1, Errno: "?", Args: []string{"1", `"x"`, "1"}},
			},
		},
		{
			name: "no arguments",
			log:  `7 sync() = 0`,
			want: []Call{{PID: 7, Name: "sync", Ret: 0}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.log)
			require.NoError(t, err)
			for i := range got {
				got[i].Line = ""
			}
			assert.Equal(t, tc.want, got)
		})
	}

	t.Run("malformed lines are errors, not skipped", func(t *testing.T) {
		for _, log := range []string{
			`openat(AT_FDCWD, "/x", O_RDONLY) = 3`, // no pid
			`7 openat(AT_FDCWD, "/x", O_RDONLY`,    // cut short
			`7 <... fsync resumed>) = 0`,           // no start
			`7 close(3) = what`,
		} {
			_, err := Parse(log)
			assert.Error(t, err, log)
		}
	})
}

func TestStraceString_DecodesEscapes(t *testing.T) {
	for _, tc := range []struct {
		arg, want string
		truncated bool
	}{
		{`"plain"`, "plain", false},
		{`"{\n  \"a\": \"b\\\\c\"\t}\r\v\f"`, "{\n  \"a\": \"b\\\\c\"\t}\r\v\f", false},
		{`"\0\0\1\177x"`, "\x00\x00\x01\x7fx", false},
		{`"\x00\xff\x41"`, "\x00\xffA", false},
		{`"\08"`, "\x008", false}, // octal stops at a non-octal digit
		{`"abc"...`, "abc", true},
	} {
		got, truncated, err := unquote(tc.arg)
		require.NoError(t, err, tc.arg)
		assert.Equal(t, tc.want, got, tc.arg)
		assert.Equal(t, tc.truncated, truncated, tc.arg)
	}
	for _, bad := range []string{`AT_FDCWD`, `"open`, `"a"b`, `"\x4"`} {
		_, _, err := unquote(bad)
		assert.Error(t, err, bad)
	}
}

func TestResolveFiles_FollowsDescriptorsAndDropsNoise(t *testing.T) {
	log := `1 openat(AT_FDCWD, "/proc/self/cgroup", O_RDONLY|O_CLOEXEC) = 3
1 write(3, "noise", 5) = 5
1 close(3) = 0
1 openat(AT_FDCWD, "/r/j/.status.json9", O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC, 0644) = 3
1 write(3, "{}\n", 3) = 3
1 write(4, "\1\0\0\0\0\0\0\0", 8) = 8
1 fsync(3) = 0
1 close(3) = 0
1 renameat(AT_FDCWD, "/r/j/.status.json9", AT_FDCWD, "/r/j/status.json") = 0
1 openat(AT_FDCWD, "/r/j", O_RDONLY|O_CLOEXEC) = 3
1 openat(3, "status.json", O_RDONLY) = 5
1 openat(AT_FDCWD, "/proc/self/fd/3/.status.json7", O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC, 0644) = 6
1 openat(AT_FDCWD, "/proc/self/fd/4/x", O_RDONLY) = 7
1 fsync(3) = 0
1 close(3) = 0
1 fsync(3) = 0
`
	calls, err := Parse(log)
	require.NoError(t, err)
	evs, err := Resolve(calls, "/r")
	require.NoError(t, err)
	var got []string
	for _, e := range evs {
		got = append(got, fmt.Sprintf("%s %s%s fd=%d %q", e.Name, e.Path, map[bool]string{true: " -> " + e.NewPath}[e.NewPath != ""], e.FD, e.Data))
	}
	assert.Equal(t, []string{
		`openat /r/j/.status.json9 fd=3 ""`,
		`write /r/j/.status.json9 fd=3 "{}\n"`,
		`fsync /r/j/.status.json9 fd=3 ""`,
		`close /r/j/.status.json9 fd=3 ""`,
		`renameat /r/j/.status.json9 -> /r/j/status.json fd=-1 ""`,
		`openat /r/j fd=3 ""`,
		`openat /r/j/status.json fd=5 ""`,
		`openat /r/j/.status.json7 fd=6 ""`,
		`fsync /r/j fd=3 ""`,
		`close /r/j fd=3 ""`,
	}, got, "a path through /proc/self/fd/3 is in /r/j, one through fd 4 (outside) is noise; "+
		"the last fsync(3) is on a closed fd and must not be attributed to /r/j")
	assert.True(t, HasFlag(evs[0].Flags, "O_EXCL"))
	assert.False(t, HasFlag(evs[5].Flags, "O_CREAT"))
}

// TestResolve_RealLog reads a log strace wrote on Linux (testdata/replace.log:
// python3 replacing /tmp/sfx/root/job/status.json through a temp file, with
// the interpreter's start-up noise, a signal line, column-padded results
// and a call unfinished in one process while another ran) and finds the
// replace protocol in it, call by call.
func TestResolve_RealLog(t *testing.T) {
	log, err := os.ReadFile("testdata/replace.log")
	require.NoError(t, err)
	calls, err := Parse(string(log))
	require.NoError(t, err)
	require.Len(t, calls, 24, "every line but the signal, with the unfinished close merged")
	assert.Equal(t, Call{PID: 26472, Name: "close", Args: []string{"255"}, Ret: 0, Line: "close(255) = 0"},
		Call{PID: calls[3].PID, Name: calls[3].Name, Args: calls[3].Args, Ret: calls[3].Ret, Line: normalSpace(calls[3].Line)})

	evs, err := Resolve(calls, "/tmp/sfx/root")
	require.NoError(t, err)
	var got []string
	for _, e := range evs {
		s := fmt.Sprintf("%s %s", e.Name, e.Path)
		if e.NewPath != "" {
			s += " -> " + e.NewPath
		}
		if e.Data != nil {
			s += fmt.Sprintf(" %q", e.Data)
		}
		got = append(got, fmt.Sprintf("%s fd=%d", s, e.FD))
	}
	assert.Equal(t, []string{
		`openat /tmp/sfx/root/job fd=3`,
		`openat /tmp/sfx/root/job/.status.json123 fd=4`,
		`write /tmp/sfx/root/job/.status.json123 "{\"state\": \"running\",\n \"msg\": \"a, \\\"b\\\" (c)\\t\xff\"}\n" fd=4`,
		`fsync /tmp/sfx/root/job/.status.json123 fd=4`,
		`close /tmp/sfx/root/job/.status.json123 fd=4`,
		`renameat /tmp/sfx/root/job/.status.json123 -> /tmp/sfx/root/job/status.json fd=-1`,
		`fsync /tmp/sfx/root/job fd=3`,
		`close /tmp/sfx/root/job fd=3`,
	}, got, "the script's own file and the other processes' fds are not in the tree")
	assert.True(t, HasFlag(evs[0].Flags, "O_DIRECTORY"))
	assert.True(t, HasFlag(evs[1].Flags, "O_EXCL"))
	assert.Equal(t, []string{"3", `".status.json123"`, "3", `"status.json"`}, evs[5].Args)
	assert.Len(t, evs[2].Data, 48, "the bytes written, decoded: the octal escape is one byte")
}

// normalSpace collapses runs of spaces, as strace pads results to a column.
func normalSpace(s string) string {
	for {
		t := strings.ReplaceAll(s, "  ", " ")
		if t == s {
			return s
		}
		s = t
	}
}

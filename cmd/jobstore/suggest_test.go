package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore/internal/testdir"
)

// TestWork_ACommandWithoutDashDashIsToldToPutItBefore: "work ROOT python3
// x" (no --) fails naming the fix, the same line with -- added, and a flag
// of the command (-u) typed without -- says it may be the command's.
func TestWork_ACommandWithoutDashDashIsToldToPutItBefore(t *testing.T) {
	root := testdir.New(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"work", root, "python3", "x.py"},
			`unexpected argument "python3" (expects ROOT, then -- and the command to run). Remedy: put -- before the command, so that its arguments are not read as jobstore's: jobstore work ` + root + ` -- python3 x.py`},
		{[]string{"work", root, "python3", "-u", "x.py"},
			`unknown flag -u. Remedy: if -u is the command's, put -- before the command: jobstore work ROOT [FLAGS] -- COMMAND [ARGS]`},
	} {
		t.Run(strings.Join(c.args[2:], " "), func(t *testing.T) {
			r := runCLI(t, c.args...)
			requireCode(t, r, exitUsage)
			requireErrorLine(t, r)
			assert.Contains(t, r.stderr, c.want)
		})
	}
}

// TestList_AKindNoJobHasSuggestsTheClosest: --kind naming no job's kind
// says so on stderr, with the kinds it is likely a typo of, and lists
// what matches as before (exit 0, stdout unchanged).
func TestList_AKindNoJobHasSuggestsTheClosest(t *testing.T) {
	root := testdir.New(t)
	for _, kind := range []string{"render", "encode"} {
		requireCode(t, runCLI(t, "submit", root, "--kind", kind), exitOK)
	}
	for _, c := range []struct {
		kinds string
		want  []string
	}{
		{"rendr", []string{`jobstore list: no job under ` + root + ` is of kind "rendr": did you mean render?`}},
		{"ren", []string{`jobstore list: no job under ` + root + ` is of kind "ren": did you mean render?`}},
		{"zzz,encode", []string{`jobstore list: no job under ` + root + ` is of kind "zzz"`}},
		{"encode", nil},
	} {
		t.Run(c.kinds, func(t *testing.T) {
			for _, json := range []bool{false, true} {
				args := []string{"list", root, "--kind", c.kinds}
				if json {
					args = append(args, "--json")
				}
				r := runCLI(t, args...)
				requireCode(t, r, exitOK)
				var lines []string
				if r.stderr != "" {
					lines = strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
				}
				require.Equal(t, c.want, lines, "stderr of %v", args)
			}
		})
	}
}

// TestWork_AKindLikelyMistypedSuggestsTheClosest: work --kind one edit
// from the kind of the root's jobs says so on stderr; a kind no job has
// and none is close to is waited for without a word (its jobs may come).
func TestWork_AKindLikelyMistypedSuggestsTheClosest(t *testing.T) {
	root := testdir.New(t)
	requireCode(t, runCLI(t, "submit", root, "--kind", "render"), exitOK)
	exe, err := os.Executable() // never run: no job is of the kind asked for
	require.NoError(t, err)
	r := runCLI(t, "work", root, "--kind", "rendr", "--until-empty", "--", exe)
	requireCode(t, r, exitOK)
	assert.Equal(t, `jobstore work: no job under `+root+` is of kind "rendr": did you mean render?`+"\n", r.stderr)
	r = runCLI(t, "work", root, "--kind", "zzz", "--until-empty", "--", exe)
	requireCode(t, r, exitOK)
	assert.Empty(t, r.stderr)
}

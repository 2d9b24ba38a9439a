package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore/internal/testdir"
)

// Each shell gets a script that asks this binary for its completions.
func TestCompletion_PrintsAScriptForEachShell(t *testing.T) {
	for shell, marker := range map[string]string{
		"bash":       "complete -o default -F __start_jobstore jobstore",
		"zsh":        "#compdef jobstore",
		"fish":       "complete -c jobstore",
		"powershell": "Register-ArgumentCompleter -CommandName 'jobstore'",
	} {
		t.Run(shell, func(t *testing.T) {
			r := runCLI(t, "completion", shell)
			requireCode(t, r, exitOK)
			require.Empty(t, r.stderr)
			require.Contains(t, r.stdout, marker)
			require.Contains(t, r.stdout, "__complete", "the script asks the binary")
		})
	}
	r := runCLI(t, "completion", "tcsh")
	requireCode(t, r, exitUsage)
	requireErrorLine(t, r)
	require.Contains(t, r.stderr, `no completion for the shell "tcsh"`)
	r = runCLI(t, "completion")
	requireCode(t, r, exitUsage)
	require.Contains(t, r.stderr, "missing SHELL")
}

// completions is what the binary offers for args, the last being the word
// being completed, and the directive (cobra's "__complete" protocol, which
// every script speaks): one value per line, its description after a tab.
func completions(t *testing.T, args ...string) (values []string, directive string) {
	t.Helper()
	r := runCLI(t, append([]string{"__complete"}, args...)...)
	requireCode(t, r, exitOK)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	for _, l := range lines[:len(lines)-1] {
		v, _, _ := strings.Cut(l, "\t")
		values = append(values, v)
	}
	return values, lines[len(lines)-1]
}

// The shell is offered the commands (not the internal __supervise), each
// command's flags, and directories where a ROOT or DIR goes.
func TestCompletion_OffersCommandsFlagsAndDirectories(t *testing.T) {
	root := testdir.New(t)
	got, directive := completions(t, "")
	for _, c := range commands() {
		require.Contains(t, got, c.name)
	}
	require.Contains(t, got, "help")
	require.NotContains(t, strings.Join(got, " "), "supervise")
	require.Equal(t, ":4", directive, "no file names among commands")

	got, _ = completions(t, "re")
	require.ElementsMatch(t, []string{"reconcile", "retry"}, got)

	got, _ = completions(t, "list", root, "--")
	require.Contains(t, got, "--json")
	require.Contains(t, got, "--watch")
	require.Contains(t, got, "--state")
	require.NotContains(t, got, "--parallel", "work's flag is not list's")

	got, directive = completions(t, "list", "")
	require.Empty(t, got)
	require.Equal(t, ":16", directive, "ROOT: directories")
	_, directive = completions(t, "list", root, "")
	require.Equal(t, ":4", directive, "list takes one ROOT")

	got, _ = completions(t, "completion", "")
	require.Equal(t, []string{"bash", "zsh", "fish", "powershell"}, got)
	got, _ = completions(t, "completion", "p")
	require.Equal(t, []string{"powershell"}, got)
	got, _ = completions(t, "help", "wa")
	require.ElementsMatch(t, []string{"wait", "watch"}, got)
}

// --state offers the filter states and --kind the kinds of ROOT's jobs,
// never file names; a comma-separated list completes its last value.
func TestCompletion_OffersStatesAndTheRootsKinds(t *testing.T) {
	root := testdir.New(t)
	for _, kind := range []string{"render", "encode", "render"} {
		requireCode(t, runCLI(t, "submit", root, "--kind", kind), exitOK)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"list", root, "--state", ""}, filterStates()},
		{[]string{"list", root, "--state", "re"}, []string{"retrying"}},
		{[]string{"list", root, "--state", "failed,s"}, []string{"failed,succeeded", "failed,scheduled"}},
		{[]string{"list", root, "--kind", ""}, []string{"encode", "render"}},
		{[]string{"list", root, "--kind", "r"}, []string{"render"}},
		{[]string{"work", root, "--kind", ""}, []string{"encode", "render"}},
		{[]string{"submit", root, "--kind", "en"}, []string{"encode"}},
		{[]string{"list", "--kind", ""}, nil}, // no ROOT yet
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			got, directive := completions(t, c.args...)
			require.ElementsMatch(t, c.want, got)
			require.Equal(t, ":4", directive, "no file names")
		})
	}
}

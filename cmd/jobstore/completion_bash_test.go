package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/axqua/jobstore/internal/prereq"

	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore/internal/testdir"
)

// bashComplete is what bash offers, with the script of "jobstore
// completion bash" loaded, for the words typed (the last one being
// completed). bash-completion's _get_comp_words_by_ref, which the script
// calls, is stood in for by the few lines it needs here.
func bashComplete(t *testing.T, words ...string) []string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil || runtime.GOOS == "windows" {
		prereq.Skip(t, "bash", "no bash here to load the completion script in (it needs a Unix shell)")
	}
	r := runCLI(t, "completion", "bash")
	requireCode(t, r, exitOK)
	script := filepath.Join(testdir.New(t), "jobstore.bash")
	require.NoError(t, os.WriteFile(script, []byte(r.stdout), 0o644))
	quoted := []string{"'" + cli + "'"}
	for _, w := range words {
		quoted = append(quoted, "'"+w+"'")
	}
	prog := `_get_comp_words_by_ref() { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
source "$1"
COMP_WORDS=(` + strings.Join(quoted, " ") + `)
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
__start_jobstore 2>/dev/null
printf '%s\n' "${COMPREPLY[@]}"`
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", prog, "bash", script)
	cmd.Env = append(os.Environ(), cliEnv...)
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			got = append(got, l)
		}
	}
	return got
}

// Loaded in bash, the script completes a command, then its flags.
func TestCompletion_BashCompletesCommandsAndFlags(t *testing.T) {
	require.Equal(t, []string{"list", "logs"}, bashComplete(t, "l"))
	require.Equal(t, []string{"--rebuild"}, bashComplete(t, "list", ".", "--reb"))
	require.Equal(t, []string{"powershell"}, bashComplete(t, "completion", "pow"))
}

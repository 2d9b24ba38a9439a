package main

import (
	"io"

	"github.com/spf13/pflag"
)

// completionShells are the shells "jobstore completion" writes a script
// for.
func completionShells() []string { return []string{"bash", "zsh", "fish", "powershell"} }

func completionCmd() *command {
	return &command{
		name:    "completion",
		args:    "bash|zsh|fish|powershell",
		summary: "print a script that completes commands, flags and directories in a shell",
		doc: `Prints a script that makes the shell complete jobstore's commands, their
flags, and the directories they take (ROOT, DIR). Load it in the shell's
start-up file:

  bash        source <(jobstore completion bash)
              (needs the bash-completion package)
  zsh         source <(jobstore completion zsh)
              (after compinit; or write it to a file named _jobstore in
              a directory of $fpath)
  fish        jobstore completion fish | source
  powershell  jobstore completion powershell | Out-String | Invoke-Expression

The script asks jobstore itself what to offer, so it follows the binary it
finds on PATH: install a new jobstore and the completion is up to date.

Exit codes: 0 printed; 2 bad arguments (a shell not in the list).`,
		minPos: 1, maxPos: 1, posNames: "SHELL (bash, zsh, fish or powershell)",
		validArgs: completionShells(),
		define:    func(*pflag.FlagSet) runFunc { return runCompletion },
	}
}

// runCompletion writes the script for the shell pos[0], made by cobra from
// the command tree.
func runCompletion(e *env, _, pos []string) error {
	root := newCommandTree(&env{stdout: io.Discard, stderr: io.Discard}, nil)
	switch pos[0] {
	case "bash":
		return root.GenBashCompletionV2(e.stdout, true)
	case "zsh":
		return root.GenZshCompletion(e.stdout)
	case "fish":
		return root.GenFishCompletion(e.stdout, true)
	case "powershell":
		return root.GenPowerShellCompletionWithDesc(e.stdout)
	}
	return usagef("no completion for the shell %q (one of %s)", pos[0], orList(completionShells()))
}

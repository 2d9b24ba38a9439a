package main

import (
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
)

// completionShells are the shells "jobstore completion" writes a script
// for.
func completionShells() []string { return []string{"bash", "zsh", "fish", "powershell"} }

func completionCmd() *command {
	return &command{
		name:    "completion",
		args:    "bash|zsh|fish|powershell",
		summary: "print a shell script that completes commands, flags and values",
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

Exit codes: 0 printed; 2 bad arguments (a shell not in the list).
Details: docs/cli.md#completion`,
		minPos: 1, maxPos: 1, posNames: "SHELL (bash, zsh, fish or powershell)",
		validArgs: completionShells(),
		define:    defineCompletion,
	}
}

// completionOptions are what "jobstore completion" is told: the shell.
type completionOptions struct {
	Shell string
}

func defineCompletion(*pflag.FlagSet) runFunc {
	var opts completionOptions
	return func(e *env, _, pos []string) error {
		opts.Shell = pos[0]
		return runCompletion(e, opts)
	}
}

// runCompletion writes the script for opts.Shell, made by cobra from the
// command tree; a shell not in completionShells is a usage error.
func runCompletion(e *env, opts completionOptions) error {
	root := newCommandTree(&env{stdout: io.Discard, stderr: io.Discard}, nil)
	switch opts.Shell {
	case "bash":
		return root.GenBashCompletionV2(e.stdout, true)
	case "zsh":
		return root.GenZshCompletion(e.stdout)
	case "fish":
		return root.GenFishCompletion(e.stdout, true)
	case "powershell":
		return root.GenPowerShellCompletionWithDesc(e.stdout)
	}
	return remedy.Usagef("no completion for the shell %q (one of %s)", opts.Shell, orList(completionShells()))
}

// registerValueCompletions completes the values of cc's --state (the
// filter states) and --kind (the kinds of the jobs under the ROOT typed
// before it), where cc has those flags; each may be a comma-separated
// list, whose last value is the one completed.
func registerValueCompletions(cc *cobra.Command) {
	if cc.Flags().Lookup("state") != nil {
		_ = cc.RegisterFlagCompletionFunc("state", func(_ *cobra.Command, _ []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return completeListValue(filterStates(), typed), cobra.ShellCompDirectiveNoFileComp
		})
	}
	if cc.Flags().Lookup("kind") != nil {
		_ = cc.RegisterFlagCompletionFunc("kind", func(_ *cobra.Command, pos []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(pos) == 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp // no ROOT yet: no kind to offer
			}
			return completeListValue(rootKinds(pos[0]), typed), cobra.ShellCompDirectiveNoFileComp
		})
	}
}

// completeListValue is the values that complete the last element of typed,
// a comma-separated list, each after the elements typed before it.
func completeListValue(values []string, typed string) []cobra.Completion {
	done, last := "", typed
	if i := strings.LastIndex(typed, ","); i >= 0 {
		done, last = typed[:i+1], typed[i+1:]
	}
	var out []cobra.Completion
	for _, v := range values {
		if strings.HasPrefix(v, last) {
			out = append(out, done+v)
		}
	}
	return out
}

// rootKinds is the kinds of the readable jobs under root, sorted; none
// when root cannot be listed.
func rootKinds(root string) []string {
	entries, err := jobstore.List(root)
	if err != nil {
		return nil
	}
	var kinds []string
	for _, en := range entries {
		if en.Spec != nil && !slices.Contains(kinds, en.Spec.Kind) {
			kinds = append(kinds, en.Spec.Kind)
		}
	}
	slices.Sort(kinds)
	return kinds
}

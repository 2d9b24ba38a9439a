package main

import (
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// This file builds the command line on cobra from the command table
// (commands()): pflag parses the flags, cobra finds the command, answers
// --help, suggests a command for a mistyped one and completes commands,
// flags and arguments in a shell (completion.go). The texts are the CLI's
// own: the help is usageText and each command's usage, and every error,
// cobra's and pflag's included, is a usageError printed as one line by
// fail.

// newCommandTree is the command line for args (as typed, without the
// program name), its commands writing to e.
func newCommandTree(e *env, args []string) *cobra.Command {
	return commandTree(e, args, commands())
}

// commandTree is newCommandTree with the commands cmds.
func commandTree(e *env, args []string, cmds []*command) *cobra.Command {
	root := &cobra.Command{
		Use:           "jobstore",
		Short:         "keep job records on disk safely",
		SilenceErrors: true,
		SilenceUsage:  true,
		// completion is a command of the table (completion.go), with
		// the CLI's help and errors.
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.SuggestionsMinimumDistance = 2
	version := root.Flags().Bool("version", false, "print the module version and VCS revision")
	// The root takes no argument: one that names no command is a typo.
	root.Args = func(_ *cobra.Command, pos []string) error {
		switch {
		case len(pos) > 0 && *version:
			return remedy.Usagef("unexpected argument %q after %s", pos[0], flagSpelling(args, "version"))
		case len(pos) > 0:
			return unknownCommand(root, "unknown command", pos[0])
		}
		return nil
	}
	root.RunE = func(*cobra.Command, []string) error {
		if *version {
			fmt.Fprint(e.stdout, buildVersion(debug.ReadBuildInfo()))
			return nil
		}
		fmt.Fprint(e.stderr, usageText(defaultTermWidth))
		return &exitError{code: exitUsage}
	}
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		if cmd := findCommand(c.Name()); cmd != nil && c.Parent() == root {
			fmt.Fprint(e.stdout, cmd.usage(helpWidth(e)))
			return
		}
		fmt.Fprint(e.stdout, usageText(helpWidth(e)))
	})
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return flagError(c, args, err) })
	root.SetHelpCommand(helpCommand(e, root))
	for _, c := range cmds {
		root.AddCommand(c.cobraCommand(e, args))
	}
	return root
}

// cobraCommand is c as a cobra command for the command line args: its
// flags defined, its positional arguments counted before it runs, and its
// usage errors naming it.
func (c *command) cobraCommand(e *env, args []string) *cobra.Command {
	cc := &cobra.Command{Use: c.name, Short: c.summary}
	run := c.define(cc.Flags())
	cc.Args = func(cc *cobra.Command, all []string) error {
		return inCommand(c.name, c.checkPositional(c.positional(cc, all)))
	}
	cc.RunE = func(cc *cobra.Command, all []string) error {
		// The arguments as typed after the command's name, for naming a
		// flag as spelled: cobra was given them with the dashes of long
		// flags doubled (withDoubleDashes).
		typed := args
		if len(args) > 0 && args[0] == c.name {
			typed = args[1:]
		}
		return inCommand(c.name, run(e, typed, c.positional(cc, all)))
	}
	cc.ValidArgsFunction = c.completeArgs
	registerValueCompletions(cc)
	return cc
}

// positional is the arguments of c that are not flags: all of them, or
// those before "--" for a commandAfterDash command.
func (c *command) positional(cc *cobra.Command, all []string) []string {
	if at := cc.ArgsLenAtDash(); c.commandAfterDash && at >= 0 {
		return all[:at]
	}
	return all
}

// checkPositional refuses too few or too many positional arguments.
func (c *command) checkPositional(pos []string) error {
	switch {
	case len(pos) < c.minPos:
		return remedy.Usagef("missing %s", c.posNames)
	case c.maxPos >= 0 && len(pos) > c.maxPos && c.commandAfterDash:
		return &remedy.UsageError{Msg: fmt.Sprintf("unexpected argument %q (expects %s, then -- and the command to run)", pos[c.maxPos], c.posNames),
			Remedy: fmt.Sprintf("put -- before the command, so that its arguments are not read as jobstore's: jobstore %s %s -- %s",
				c.name, strings.Join(pos[:c.maxPos], " "), strings.Join(pos[c.maxPos:], " "))}
	case c.maxPos >= 0 && len(pos) > c.maxPos:
		return remedy.Usagef("unexpected argument %q (expects %s)", pos[c.maxPos], c.posNames)
	}
	return nil
}

// inCommand names the command in a usage error that names none.
func inCommand(name string, err error) error {
	var ue *remedy.UsageError
	if errors.As(err, &ue) && ue.Cmd == "" {
		ue.Cmd = name
	}
	return err
}

// helpCommand is "jobstore help [COMMAND]": the usage text, or a
// command's.
func helpCommand(e *env, root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND]",
		Short: "print the usage text, or a command's",
		Args:  cobra.ArbitraryArgs,
		RunE: func(_ *cobra.Command, pos []string) error {
			if len(pos) == 0 {
				fmt.Fprint(e.stdout, usageText(helpWidth(e)))
				return nil
			}
			c := findCommand(pos[0])
			if c == nil || len(pos) > 1 {
				return unknownCommand(root, "help: no command", strings.Join(pos, " "))
			}
			fmt.Fprint(e.stdout, c.usage(helpWidth(e)))
			return nil
		},
		ValidArgsFunction: func(_ *cobra.Command, pos []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(pos) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []cobra.Completion
			for _, c := range commands() {
				if strings.HasPrefix(c.name, typed) {
					names = append(names, cobra.CompletionWithDesc(c.name, c.summary))
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
	}
}

// unknownCommand is the error for a command name that is not one (what
// says where it was given), with the commands cobra finds it is likely a
// typo of.
func unknownCommand(root *cobra.Command, what, name string) error {
	hint := "run 'jobstore help' for the list of commands"
	if s := root.SuggestionsFor(name); len(s) > 0 {
		hint = "did you mean " + orList(s) + "? Run 'jobstore help' for the list of commands"
	}
	return &remedy.UsageError{Msg: fmt.Sprintf("%s %q", what, name), Remedy: hint}
}

// completeArgs completes c's positional arguments in a shell: a
// directory (a ROOT, a job directory) while c takes more, nothing after.
func (c *command) completeArgs(cc *cobra.Command, all []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
	switch {
	case c.commandAfterDash && cc.ArgsLenAtDash() >= 0:
		return nil, cobra.ShellCompDirectiveDefault // the command to run and its arguments
	case c.maxPos >= 0 && len(all) >= c.maxPos:
		return nil, cobra.ShellCompDirectiveNoFileComp
	case len(c.validArgs) > 0:
		var values []cobra.Completion
		for _, v := range c.validArgs {
			if strings.HasPrefix(v, typed) {
				values = append(values, v)
			}
		}
		return values, cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveFilterDirs
}

// flagError is pflag's parse error err of command c over args (the
// command line as typed) as a usage error that names the flag as typed,
// suggesting the flags an unknown one is likely a typo of.
func flagError(c *cobra.Command, args []string, err error) error {
	ue := &remedy.UsageError{}
	help := "run 'jobstore help'"
	if c.HasParent() {
		ue.Cmd = c.Name()
		help = "run 'jobstore help " + c.Name() + "'"
	}
	var (
		unknown *pflag.NotExistError
		noValue *pflag.ValueRequiredError
		invalid *pflag.InvalidValueError
		syntax  *pflag.InvalidSyntaxError
	)
	switch {
	case errors.As(err, &unknown):
		name := unknown.GetSpecifiedName()
		ue.Msg = "unknown flag " + flagSpelling(args, name)
		if s := flagSuggestions(c.Flags(), name, 2); len(s) > 0 {
			ue.Remedy = "did you mean " + orList(s) + "? " + strings.ToUpper(help[:1]) + help[1:] + " for its flags"
		}
		if cmd := findCommand(c.Name()); cmd != nil && cmd.commandAfterDash && !slices.Contains(args, "--") {
			// A flag of the command to run, typed without the -- before it.
			ue.Remedy = "if " + flagSpelling(args, name) + " is the command's, put -- before the command: jobstore " +
				c.Name() + " " + cmd.posNames + " [FLAGS] -- COMMAND [ARGS]"
		}
	case errors.As(err, &noValue):
		ue.Msg = flagSpelling(args, noValue.GetSpecifiedName()) + " needs a value"
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		ue.Msg = fmt.Sprintf("%s: invalid value %q: %s", flagSpelling(args, f.Name), invalid.GetValue(), invalidValueReason(f, invalid))
	case errors.As(err, &syntax):
		ue.Msg = fmt.Sprintf("bad flag syntax %q", syntax.GetSpecifiedFlag())
	default:
		ue.Msg = err.Error()
	}
	return ue
}

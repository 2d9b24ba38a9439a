package main

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/axqua/jobstore"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// This file is how flags may be spelled and what their mistakes say. A
// long flag may be typed with one dash or two ("-json", "--json"), as the
// standard flag package accepts; pflag reads two, so withDoubleDashes
// gives it two, and errors name a flag as the user typed it
// (flagSpelling). pflag's parse errors are told apart by their types, not
// their text.

// withDoubleDashes is args (the command line, without the program name)
// with each long flag typed with one dash given two. A flag's value that
// follows it ("--search -x") and everything after "--" are left as they
// are; a single letter ("-h") and a negative number ("-1") too. The flags
// are those of the command args[0] names, or the root's.
func withDoubleDashes(root *cobra.Command, args []string) []string {
	out := append([]string{}, args...) // never nil: cobra reads os.Args for nil
	fs, from := root.Flags(), 0
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub := subcommand(root, args[0])
		if sub == nil {
			return out
		}
		fs, from = sub.Flags(), 1
	}
	for i := from; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if r, _ := utf8.DecodeRuneInString(a[min(1, len(a)):]); len(a) > 2 && a[0] == '-' && unicode.IsLetter(r) {
			a = "-" + a
			out[i] = a
		}
		if !strings.HasPrefix(a, "--") || strings.Contains(a, "=") {
			continue
		}
		if f := fs.Lookup(a[2:]); f != nil && f.NoOptDefVal == "" {
			i++ // its value follows, whatever it looks like
		}
	}
	return out
}

// subcommand is root's command named name, or nil.
func subcommand(root *cobra.Command, name string) *cobra.Command {
	for _, c := range root.Commands() {
		if c.Name() == name {
			return c
		}
	}
	return nil
}

// flagSpelling is flag name as the user typed it in args ("-json" or
// "--json"), or "--name" when it is not there.
func flagSpelling(args []string, name string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		dashes := len(a) - len(strings.TrimLeft(a, "-"))
		if dashes == 0 || dashes > 2 {
			continue
		}
		if n, _, _ := strings.Cut(a[dashes:], "="); n == name {
			return a[:dashes] + name
		}
	}
	return "--" + name
}

// invalidValueReason says why flag f refused a value: what a duration, a
// whole number or a boolean looks like, rather than Go's parser's words
// (strconv.ParseBool: parsing "maybe": invalid syntax); the error of the
// CLI's own flag types (written for users) otherwise.
func invalidValueReason(f *pflag.Flag, err *pflag.InvalidValueError) string {
	switch f.Value.Type() {
	case "duration":
		return "want a duration such as 300ms, 90s or 1h30m"
	case "int":
		return "want a whole number"
	case "bool":
		return "want true or false"
	}
	return err.Unwrap().Error()
}

// safetyPollFlag defines --interval, the safety poll of a command that
// follows one job's status.json (watch, wait).
func safetyPollFlag(fs *pflag.FlagSet) *time.Duration {
	return fs.Duration("interval", jobstore.DefaultPollInterval, "safety poll: status.json is also read this often, events or not")
}

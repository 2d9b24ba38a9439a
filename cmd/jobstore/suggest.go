package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// orList is "a", "a or b", "a, b or c".
func orList(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// flagSuggestions is the flags of fs that typed is likely a typo of.
func flagSuggestions(fs *pflag.FlagSet, typed string, minDistance int) []string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" {
			names = append(names, f.Name)
		}
	})
	s := suggestionsAmong(names, typed, minDistance)
	for i := range s {
		s[i] = "--" + s[i]
	}
	return s
}

// suggestionsAmong is the names that typed is likely a typo of, as cobra
// finds a command a mistyped one is likely a typo of (within minDistance
// edits, or typed is a prefix): cobra suggests only commands, so its
// matcher is given the names as commands.
func suggestionsAmong(names []string, typed string, minDistance int) []string {
	probe := &cobra.Command{Use: "names"}
	probe.SuggestionsMinimumDistance = minDistance
	for _, n := range names {
		probe.AddCommand(&cobra.Command{Use: n, Run: func(*cobra.Command, []string) {}})
	}
	return probe.SuggestionsFor(typed)
}

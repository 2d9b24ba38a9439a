package main

// This file is what work's command line holds beside the flags the other
// commands share: its --kind values and the command after "--".

import (
	"errors"
	"strings"
)

// kindsFlag collects --kind values.
type kindsFlag []string

func (k *kindsFlag) String() string { return strings.Join(*k, ",") }

// Type is pflag's name for the value: "value", as the usage text shows it.
func (k *kindsFlag) Type() string { return "value" }

func (k *kindsFlag) Set(v string) error {
	if v == "" {
		return errors.New("a kind cannot be empty")
	}
	*k = append(*k, v)
	return nil
}

// splitCommand splits args at the first "--": the worker's own arguments,
// then the command. dashed reports whether there was a "--".
func splitCommand(args []string) (own, argv []string, dashed bool) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:], true
		}
	}
	return args, nil, false
}

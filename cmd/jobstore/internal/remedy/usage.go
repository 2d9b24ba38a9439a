package remedy

import "fmt"

// UsageError is a mistake on the command line: exit code 2.
type UsageError struct {
	Cmd    string // the subcommand, if known
	Msg    string
	Remedy string // default: read the command's help
}

// Error is the mistake without the remedy (RemedyText).
func (e *UsageError) Error() string {
	prefix := "jobstore"
	if e.Cmd != "" {
		prefix += " " + e.Cmd
	}
	return prefix + ": " + e.Msg
}

// RemedyText is the remedy given, or else: read the command's help.
func (e *UsageError) RemedyText() string {
	switch {
	case e.Remedy != "":
		return e.Remedy
	case e.Cmd != "":
		return "run 'jobstore help " + e.Cmd + "'"
	}
	return "run 'jobstore help'"
}

func Usagef(format string, args ...any) error { return &UsageError{Msg: fmt.Sprintf(format, args...)} }

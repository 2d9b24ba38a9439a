// Package remedy tells people what went wrong and what to do: every error
// the jobstore command prints is one line with its remedy (ErrorLine), the
// command's own remedy first (WithCLIRemedy), then one per error code of
// the library; a mistake on the command line is a *UsageError.
package remedy

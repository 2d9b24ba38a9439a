// Package termtext makes text safe and sized for a terminal: a record's
// bytes escaped so that they cannot move the cursor or retitle the window
// (EscapeTerminal), widths in terminal cells, one-line messages and counted nouns.
package termtext

package main

import (
	"io"
	"os"

	"golang.org/x/term"
)

// terminal is the terminal a command writes to: every display that is
// redrawn in place (watch's line, list --watch's table) is fitted to its
// size, read again at each redraw since a terminal can be resized while
// watched.
type terminal struct {
	// size reports the columns and rows at the moment it is called.
	size func() (cols, rows int)
}

// Assumed when a terminal does not report its size.
const (
	defaultTermWidth  = 80
	defaultTermHeight = 24
)

// terminalOf is w's terminal, or nil when w is not one (a pipe, a file,
// /dev/null).
func terminalOf(w io.Writer) *terminal {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &terminal{size: func() (int, int) {
		cols, rows, err := term.GetSize(int(f.Fd()))
		if err != nil {
			return defaultTermWidth, defaultTermHeight
		}
		return cols, rows
	}}
}

// width is the terminal's columns, or defaultTermWidth when it does not
// say.
func (t *terminal) width() int {
	if cols, _ := t.size(); cols > 0 {
		return cols
	}
	return defaultTermWidth
}

// height is the terminal's rows, or defaultTermHeight when it does not say:
// a display redrawn in place by moving the cursor up must fit in them,
// since the cursor cannot move above the top row.
func (t *terminal) height() int {
	if _, rows := t.size(); rows > 0 {
		return rows
	}
	return defaultTermHeight
}

package main

import (
	"bytes"
	"io"
	"strings"

	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

// This file is the CLI's one table printer: columns two blanks apart, each
// as wide as its widest cell in terminal cells (termtext), so that
// wide characters, combining marks and emoji keep the columns aligned.
// list and list --watch lay out their table with it (fitTable), and every
// other aligned output writes its rows through a tableWriter.

// columnGap is the blanks between two columns.
const columnGap = 2

// alignRows lays rows out as lines: every cell but the last of its row is
// padded to its column's width plus columnGap. A column's width is that of
// its widest padded cell.
func alignRows(rows [][]string) []string {
	var widths []int
	for _, r := range rows {
		for c, cell := range r[:max(len(r)-1, 0)] {
			if c == len(widths) {
				widths = append(widths, 0)
			}
			widths[c] = max(widths[c], termtext.Cells(cell))
		}
	}
	lines := make([]string, 0, len(rows))
	for _, r := range rows {
		var b strings.Builder
		for c, cell := range r {
			if c < len(r)-1 {
				b.WriteString(termtext.PadCells(cell, widths[c]+columnGap))
			} else {
				b.WriteString(cell)
			}
		}
		lines = append(lines, b.String())
	}
	return lines
}

// tableWriter takes lines whose cells end with a tab, as text/tabwriter
// does, and writes them aligned by alignRows when flushed.
type tableWriter struct {
	out io.Writer
	buf bytes.Buffer
}

func newTableWriter(out io.Writer) *tableWriter { return &tableWriter{out: out} }

func (t *tableWriter) Write(p []byte) (int, error) { return t.buf.Write(p) }

// Flush writes the lines written so far, aligned; a last line without a
// newline is written without one.
func (t *tableWriter) Flush() error {
	text := t.buf.String()
	t.buf.Reset()
	if text == "" {
		return nil
	}
	end := ""
	if strings.HasSuffix(text, "\n") {
		text, end = text[:len(text)-1], "\n"
	}
	var rows [][]string
	for _, l := range strings.Split(text, "\n") {
		rows = append(rows, strings.Split(l, "\t"))
	}
	_, err := io.WriteString(t.out, strings.Join(alignRows(rows), "\n")+end)
	return err
}

package termtext

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// EscapeTerminal is s as it may be written to a terminal: every character
// that a terminal would act on instead of showing it is replaced by its Go
// escape, as strconv.Quote writes it, and the rest is kept as it is,
// printable Unicode included. Escaped are the C0 controls (\n, \t, \x1b,
// ...), DEL (\x7f), the C1 controls (\u0080 to \u009f), the bidirectional
// overrides and isolates (\u202a to \u202e, \u2066 to \u2069), which
// reorder what follows them on the line, and each byte that is not valid
// UTF-8 (\xff). A backslash is kept as it is, so the result is meant for
// people, not for unquoting; it holds only printable characters, so
// escaping it again changes nothing. Text that a job's submitter or runner
// wrote (kinds, labels, messages, errors, IDs) goes through it before it
// reaches a terminal; JSON output carries the exact strings instead.
func EscapeTerminal(s string) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if escapedRune(r, size) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s // the usual case: nothing to escape, nothing allocated
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case escapedRune(r, size):
			q := strconv.QuoteRune(r) // '\x1b', '\u202e', '\n'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// escapedRune reports whether EscapeTerminal escapes r, decoded from size
// bytes (a RuneError of one byte is an invalid byte).
func escapedRune(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// hex2 is b as two lower-case hexadecimal digits.
func hex2(b byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[b>>4], digits[b&0xf]})
}

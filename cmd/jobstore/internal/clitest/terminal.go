package clitest

// TerminalActsOn reports whether a terminal acts on r: the characters
// that must not reach one, written out apart from termtext's own test of
// them.
func TerminalActsOn(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

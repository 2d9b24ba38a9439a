package termtext

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/stretchr/testify/require"
)

func TestEscapeTerminal(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain ASCII is kept", "frame 12/30", "frame 12/30"},
		{"printable Unicode is kept", "café 渲染 🎬", "café 渲染 🎬"},
		{"empty", "", ""},
		{"colour sequence", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"title sequence with BEL", "\x1b]0;title\x07", `\x1b]0;title\a`},
		{"newline, return and tab", "a\nb\rc\td", `a\nb\rc\td`},
		{"NUL and other C0", "\x00\x01\x1f", `\x00\x01\x1f`},
		{"DEL", "x\x7fy", `x\x7fy`},
		{"C1 controls, CSI among them", "\u0085\u009b31m\u0080", `\u0085\u009b31m\u0080`},
		{"invalid UTF-8", "ab\xffc\xc3", `ab\xffc\xc3`},
		{"bidi overrides", "a\u202eb\u202ac\u202dd", `a\u202eb\u202ac\u202dd`},
		{"bidi isolates", "\u2066x\u2067y\u2068z\u2069", `\u2066x\u2067y\u2068z\u2069`},
		{"neighbours of the bidi ranges are kept", "\u2029\u202f\u2065\u206a", "\u2029\u202f\u2065\u206a"},
		{"backslash is kept", `C:\jobs\x1b`, `C:\jobs\x1b`},
		{"first printable above C1", "\u00a0é", "\u00a0é"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, EscapeTerminal(tc.in))
		})
	}
}

// TestEscapeTerminal_AgreesWithStrconv compares EscapeTerminal with
// strconv.Unquote, the reference for Go escapes: for text without a
// backslash or a quote, unquoting the escaped text gives the text back
// (invalid bytes come back as the same bytes), and the escaped text holds
// nothing a terminal acts on.
func TestEscapeTerminal_AgreesWithStrconv(t *testing.T) {
	var inputs []string
	for b := 0; b < 256; b++ {
		inputs = append(inputs, "x"+string([]byte{byte(b)})+"y")
	}
	for r := rune(0x80); r < 0x3000; r++ {
		inputs = append(inputs, string(r)+"\x1b[0m")
	}
	inputs = append(inputs, "\xe2\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80") // cut, surrogate, beyond U+10FFFF
	for _, in := range inputs {
		if strings.ContainsAny(in, `\"`) {
			continue
		}
		out := EscapeTerminal(in)
		back, err := strconv.Unquote(`"` + out + `"`)
		require.NoError(t, err, "%q escaped to %q", in, out)
		require.Equal(t, in, back, "%q escaped to %q", in, out)
		require.Equal(t, out, EscapeTerminal(out), "escaping %q twice", in)
		require.True(t, utf8.ValidString(out), "%q escaped to %q", in, out)
		for _, r := range out {
			require.False(t, clitest.TerminalActsOn(r), "%q escaped to %q, which keeps %U", in, out, r)
		}
	}
}

package termtext

import (
	"fmt"
	"strings"
)

// OneLine folds s onto one line: an error message must not break the
// "errors are one line" rule because a record held a newline.
func OneLine(s string) string {
	s = strings.ReplaceAll(s, "\r\n", " ")
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}

// Plural is "1 job", "2 jobs".
func Plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

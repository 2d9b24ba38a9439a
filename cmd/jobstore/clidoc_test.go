package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// cliDoc is docs/cli.md, the command's documentation.
func cliDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	require.NoError(t, err)
	return string(b)
}

// The check report quoted in docs/cli.md is what check prints for the
// broken fixtures, line for line (abridged: a subset, in order).
func TestCLIDoc_CheckExampleIsWhatCheckPrints(t *testing.T) {
	m := regexp.MustCompile("`jobstore check cmd/jobstore/testdata/broken`, abridged:\n\n((?:    .*\n)+)").FindStringSubmatch(cliDoc(t))
	require.NotNil(t, m, "docs/cli.md has no check example")
	r := runCLI(t, "check", brokenRoot)
	requireCode(t, r, exitUnsuccessful)
	squeeze := regexp.MustCompile(` {2,}`)
	out := strings.Split(squeeze.ReplaceAllString(strings.ReplaceAll(r.stdout, brokenRoot, "cmd/jobstore/testdata/broken"), "  "), "\n")
	at := 0
	for _, line := range strings.Split(strings.TrimSuffix(m[1], "\n"), "\n") {
		want := squeeze.ReplaceAllString(strings.TrimPrefix(line, "    "), "  ")
		for at < len(out) && out[at] != want {
			at++
		}
		require.Less(t, at, len(out), "docs/cli.md quotes a line check does not print (or not in this order):\n%s\ncheck printed:\n%s", want, r.stdout)
	}
}

// docs/cli.md lists the kinds of the JSON errors: exactly the codes
// jobstore.ErrorCode can return, read from errors.go, so that the list
// cannot fall behind a new sentinel again.
func TestCLIDoc_ListsEveryErrorKind(t *testing.T) {
	m := regexp.MustCompile("`kind` is `ErrorCode`'s stable name: ([^;]+);").FindStringSubmatch(cliDoc(t))
	require.NotNil(t, m, "docs/cli.md has no sentence listing the error kinds")
	var listed []string
	for _, k := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(m[1], -1) {
		listed = append(listed, k[1])
	}
	require.ElementsMatch(t, libraryErrorCodes(t), listed, "docs/cli.md's error kinds")
}

// Every command's help has a line "Details: docs/cli.md#NAME", and NAME is
// an anchor of docs/cli.md, so that what the short help leaves out is
// one link away.
func TestCLIDoc_EachHelpLinksToItsDetails(t *testing.T) {
	doc := cliDoc(t)
	link := regexp.MustCompile(`\nDetails: docs/cli\.md#([a-z-]+)\n`)
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			r := runCLI(t, "help", c.name)
			requireCode(t, r, exitOK)
			m := link.FindStringSubmatch(r.stdout)
			require.NotNil(t, m, "jobstore help %s has no line \"Details: docs/cli.md#...\":\n%s", c.name, r.stdout)
			require.Contains(t, doc, `<a id="`+m[1]+`"></a>`, "docs/cli.md has no anchor %q for jobstore help %s", m[1], c.name)
		})
	}
}

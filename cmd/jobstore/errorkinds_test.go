package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// libraryErrorCodes reads the library's errors.go for every sentinel
// literal (&sentinel{"code", ...}) and returns the codes, so that a sentinel
// added there is seen here without anyone updating a list.
func libraryErrorCodes(t *testing.T) []string {
	t.Helper()
	path := filepath.Join("..", "..", "errors.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	require.NoError(t, err)
	var codes []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		if id, ok := lit.Type.(*ast.Ident); !ok || id.Name != "sentinel" || len(lit.Elts) == 0 {
			return true
		}
		b, ok := lit.Elts[0].(*ast.BasicLit)
		require.True(t, ok && b.Kind == token.STRING, "a sentinel literal in %s does not start with its code", path)
		code, err := strconv.Unquote(b.Value)
		require.NoError(t, err)
		codes = append(codes, code)
		return true
	})
	return append(codes, "io") // ErrorCode's name for an error of no kind
}

// Every code jobstore.ErrorCode can return is listed in `list --help`,
// where scripts that read --json learn the kinds.
func TestListHelp_NamesEveryErrorKind(t *testing.T) {
	codes := libraryErrorCodes(t)
	// The parse must find the sentinels the CLI knows of, or it proves nothing.
	for _, s := range []error{jobstore.ErrNotJob, jobstore.ErrExists, jobstore.ErrCorrupt, jobstore.ErrTooLarge,
		jobstore.ErrInvalid, jobstore.ErrNewerSchema, jobstore.ErrNoMigration, jobstore.ErrLocked,
		jobstore.ErrCancelRequested, jobstore.ErrNotRegular, jobstore.ErrNotOwner} {
		require.Contains(t, codes, jobstore.ErrorCode(s), "errors.go was not read as expected")
	}
	help := runCLI(t, "list", "--help").stdout
	m := regexp.MustCompile(`"kind" is one of ([a-z_,\s]+);`).FindStringSubmatch(help)
	require.NotNil(t, m, "list --help has no sentence listing the error kinds")
	listed := map[string]bool{}
	for _, k := range strings.Split(m[1], ",") {
		listed[strings.TrimSpace(k)] = true
	}
	for _, code := range codes {
		require.True(t, listed[code], "list --help does not name the error kind %q (it lists %s)", code, m[1])
	}
}

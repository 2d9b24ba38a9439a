package jobstore_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// usesOfLaterFiles are the root files that use a name declared in a file
// docs/source.md lists after them: the exceptions to its order, each as
// "user -> declaring file".
var usesOfLaterFiles = []string{
	"build.go -> liveindex.go",
	"cancel.go -> liveretire.go",
	"next.go -> nextcache.go",
	"nextentry.go -> retry.go",
	"nextview.go -> nextevents.go",
	"ownership.go -> run.go",
	"progress.go -> run.go",
	"reconcile.go -> liveretire.go",
	"reconcile.go -> retry.go",
	"run.go -> retry.go",
	"run.go -> runend.go",
	"runend.go -> worker.go",
	"start.go -> retry.go",
	"sweep.go -> build.go",
	"worker.go -> taker.go",
}

// TestSourceMap_FilesUseFilesListedBefore keeps docs/source.md's order true:
// a root file uses only names declared in files listed before it, except
// the uses in usesOfLaterFiles. Names are matched as package-level
// identifiers (a method or field of the same name is not a use).
//
//	go test -run TestSourceMap_FilesUseFilesListedBefore .
func TestSourceMap_FilesUseFilesListedBefore(t *testing.T) {
	doc := string(readFile(t, filepath.Join("docs", "source.md")))
	rows := regexp.MustCompile("(?m)^\\| `([^`/]+\\.go)` \\|").FindAllStringSubmatch(doc, -1)
	require.NotEmpty(t, rows, "docs/source.md should list the root's files")
	position := map[string]int{}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	declaredIn := map[string]string{}
	for i, r := range rows {
		name := r[1]
		position[name] = i
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		files[name] = f
		for _, id := range packageLevelNames(f) {
			declaredIn[id] = name
		}
	}

	var found []string
	for name, f := range files {
		seen := map[string]bool{}
		var visit func(ast.Node) bool
		visit = func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				ast.Inspect(n.X, visit) // n.Sel is a field, a method or another package's name
				return false
			case *ast.Ident:
				decl, ok := declaredIn[n.Name]
				if ok && position[decl] > position[name] && !seen[decl] {
					seen[decl] = true
					found = append(found, fmt.Sprintf("%s -> %s", name, decl))
				}
			}
			return true
		}
		ast.Inspect(f, visit)
	}
	slices.Sort(found)
	for _, use := range found {
		assert.Contains(t, usesOfLaterFiles, use,
			"a file uses a file docs/source.md lists after it: move one of them in the list, or add the use to usesOfLaterFiles")
	}
	for _, use := range usesOfLaterFiles {
		assert.Contains(t, found, use, "usesOfLaterFiles names a use that is gone: remove it")
	}
}

// packageLevelNames are the functions, types, constants and variables f
// declares at package level, not its methods; the blank identifier is
// nobody's.
func packageLevelNames(f *ast.File) []string {
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				names = append(names, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names = append(names, s.Name.Name)
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if id.Name != "_" {
							names = append(names, id.Name)
						}
					}
				}
			}
		}
	}
	return names
}

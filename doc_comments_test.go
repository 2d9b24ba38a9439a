package jobstore_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// TestDocComments_OpenWithTheirName keeps every doc comment of the module
// (the command, the internal packages and the nested test modules
// included) opening with the name it documents, as Go's convention has it:
// "WriteStatus writes ...", optionally after "A", "An" or "The". A rename
// that leaves its comment behind fails here, naming the file and line.
// Test, benchmark, fuzz and example functions are exempt: their comments
// describe the behaviour they prove.
func TestDocComments_OpenWithTheirName(t *testing.T) {
	var bad []string
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		files++
		bad = append(bad, misnamedDocs(t, path)...)
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, files, 100, "the walk should reach the module's Go files")
	if len(bad) > 0 {
		t.Errorf("%d doc comments do not open with the name they document (write \"Name ...\", or \"A/An/The Name ...\"):\n%s",
			len(bad), strings.Join(bad, "\n"))
	}
}

// misnamedDocs returns "file:line: name: opening" for each doc comment of
// path that does not open with its declaration's name.
func misnamedDocs(t *testing.T, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	require.NoError(t, err, "parse %s", path)
	isTest := strings.HasSuffix(path, "_test.go")
	var bad []string
	check := func(name string, doc *ast.CommentGroup) {
		if doc == nil || name == "_" || opensWith(doc.Text(), name) {
			return
		}
		words := strings.Fields(doc.Text())
		bad = append(bad, fsetLine(fset, doc.Pos())+": "+name+": "+strings.Join(words[:min(6, len(words))], " "))
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if isTest && isTestEntry(d) {
				continue
			}
			check(d.Name.Name, d.Doc)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				doc := specDoc(spec)
				if doc == nil && len(d.Specs) == 1 {
					doc = d.Doc // a group's comment documents the group, a lone declaration's documents it
				}
				switch s := spec.(type) {
				case *ast.TypeSpec:
					check(s.Name.Name, doc)
				case *ast.ValueSpec:
					if len(s.Names) == 1 {
						check(s.Names[0].Name, doc)
					}
				}
			}
		}
	}
	return bad
}

func specDoc(spec ast.Spec) *ast.CommentGroup {
	switch s := spec.(type) {
	case *ast.TypeSpec:
		return s.Doc
	case *ast.ValueSpec:
		return s.Doc
	}
	return nil
}

// opensWith reports whether a doc comment's text opens with name, maybe
// after an article, as "name", "name's" or "name" followed by punctuation.
func opensWith(text, name string) bool {
	words := strings.Fields(text)
	if len(words) == 0 {
		return true // an empty comment is nobody's doc
	}
	first := words[0]
	if (first == "A" || first == "An" || first == "The") && len(words) > 1 {
		first = words[1]
	}
	first = strings.TrimSuffix(strings.TrimRightFunc(first, unicode.IsPunct), "'s")
	return first == name
}

// isTestEntry reports whether d is a function go test calls by its name.
func isTestEntry(d *ast.FuncDecl) bool {
	if d.Recv != nil {
		return false
	}
	for _, prefix := range []string{"Test", "Benchmark", "Fuzz", "Example"} {
		if strings.HasPrefix(d.Name.Name, prefix) {
			return true
		}
	}
	return false
}

func fsetLine(fset *token.FileSet, pos token.Pos) string {
	p := fset.Position(pos)
	return p.Filename + ":" + strconv.Itoa(p.Line)
}

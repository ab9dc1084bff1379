package safetext

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTextMadeOnlyByCleaning walks the module's Go files and fails on a
// conversion safetext.Text(x) of anything but a constant outside this
// package: that would mark uncleaned text clean. It also fails when a
// package under tui/ cleans text: panes render what the sources made
// clean, they do not clean it again. Tests are held to the first rule too:
// a fixture that marks hostile bytes clean would test nothing.
func TestTextMadeOnlyByCleaning(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from internal/safetext: %v", err)
	}
	self := filepath.Join(root, "internal", "safetext")
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || filepath.Dir(path) == self {
			return nil
		}
		files++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		// A pane is a package under tui/; its harnesses (peerstest,
		// labtest, tuitest) stand in for the sources and may clean.
		pane := strings.HasPrefix(rel, "tui/") && !strings.HasSuffix(filepath.Base(filepath.Dir(path)), "test")
		name := importName(f)
		if name == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok && ts.Assign.IsValid() && isText(ts.Type, name) {
				t.Errorf("%s: an alias of safetext.Text hides its conversions from this test", where(rel, fset, ts))
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != name {
				return true
			}
			switch {
			case sel.Sel.Name == "Text" && len(call.Args) == 1 && !constant(call.Args[0]):
				t.Errorf("%s: safetext.Text(%s) marks text clean without cleaning it: use safetext.New", where(rel, fset, call), exprString(call.Args[0]))
			case sel.Sel.Name == "Text" && len(call.Args) == 1 && !cleanLiteral(call.Args[0]):
				t.Errorf("%s: safetext.Text of a literal that Clean would change: use safetext.New", where(rel, fset, call))
			case pane && !strings.HasSuffix(rel, "_test.go") && (sel.Sel.Name == "Clean" || sel.Sel.Name == "New" || sel.Sel.Name == "Format" || sel.Sel.Name == "Of" || sel.Sel.Name == "All"):
				t.Errorf("%s: a pane cleans text (safetext.%s): the source that reads it must hand it over as safetext.Text", where(rel, fset, call), sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("walked %d Go files: the module root is wrong", files)
	}
}

// constant reports whether e is a string literal or a concatenation of them.
func constant(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return true
	case *ast.ParenExpr:
		return constant(e.X)
	case *ast.BinaryExpr:
		return constant(e.X) && constant(e.Y)
	}
	return false
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	}
	return "…"
}

// where is a finding's place, relative to the module root.
func where(rel string, fset *token.FileSet, n ast.Node) string {
	pos := fset.Position(n.Pos())
	return fmt.Sprintf("%s:%d:%d", rel, pos.Line, pos.Column)
}

// importName is the name a file gives internal/safetext ("" when it does
// not import it), so that an import alias is followed too.
func importName(f *ast.File) string {
	for _, im := range f.Imports {
		if p, err := strconv.Unquote(im.Path.Value); err == nil && strings.HasSuffix(p, "/internal/safetext") {
			if im.Name != nil {
				return im.Name.Name
			}
			return "safetext"
		}
	}
	return ""
}

// isText reports whether e names safetext.Text under the import name.
func isText(e ast.Expr, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Text" {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == name
}

// cleanLiteral reports whether every string literal in e is unchanged by
// Clean.
func cleanLiteral(e ast.Expr) bool {
	ok := true
	ast.Inspect(e, func(n ast.Node) bool {
		if lit, isLit := n.(*ast.BasicLit); isLit && lit.Kind == token.STRING {
			if v, err := strconv.Unquote(lit.Value); err == nil && Clean(v) != v {
				ok = false
			}
		}
		return true
	})
	return ok
}

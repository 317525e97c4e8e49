package gateway_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoTypeAssertionOnDrivers: the gateway learns what a driver can do from its
// Description alone. A type assertion or type switch to a drivers type would find
// abilities that an out-of-process driver's host stub always has, so none may remain.
func TestNoTypeAssertionOnDrivers(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ta, ok := n.(*ast.TypeAssertExpr)
			if !ok || ta.Type == nil { // ta.Type nil: the x.(type) of a type switch
				return true
			}
			if sel, ok := ta.Type.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "drivers" {
					t.Errorf("%s: type assertion to drivers.%s", fset.Position(ta.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
}

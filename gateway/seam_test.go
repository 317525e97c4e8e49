package gateway_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const driversPath = "github.com/anysqs/anysqs/drivers"

// rulesPath is the SQS rules package beside the contract: limits and handle rules the
// gateway and every driver apply alike. It names no backend and imports only the
// standard library, capabilities and drivers, so the gateway may import it.
const rulesPath = driversPath + "/sqsrule"

// TestNoTypeAssertionOnDrivers: the gateway learns what a driver can do from its
// Description alone. A type assertion or a type switch's case naming a type of
// package drivers or of a driver package would find abilities that an out-of-process
// driver's host stub always has, or single out one backend, so none may remain in
// the gateway or its subpackages; nor may they import a driver package: the
// gateway knows the contract (and the SQS rules of drivers/sqsrule), never a backend.
func TestNoTypeAssertionOnDrivers(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return err
		}
		for _, msg := range seamViolations(fset, f) {
			t.Error(msg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// seamViolations returns, for one file, every import of a driver package and every
// type assertion or type-switch case that names a type of package drivers or of a
// driver package, with its position.
func seamViolations(fset *token.FileSet, f *ast.File) []string {
	var out []string
	// The file's names for package drivers and the driver packages under it.
	driverPkgs := map[string]string{}
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil || (p != driversPath && !strings.HasPrefix(p, driversPath+"/")) {
			continue
		}
		if p != driversPath && p != rulesPath {
			out = append(out, fset.Position(imp.Pos()).String()+": imports driver package "+p)
		}
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		driverPkgs[name] = p
	}
	// namesDriverType reports the first drivers type that a type expression mentions
	// (through pointers, slices, maps, generics and the like).
	namesDriverType := func(expr ast.Expr) string {
		found := ""
		ast.Inspect(expr, func(n ast.Node) bool {
			if found != "" {
				return false
			}
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok {
				if p, ok := driverPkgs[pkg.Name]; ok {
					found = p + "." + sel.Sel.Name
				}
			}
			return true
		})
		return found
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.TypeAssertExpr:
			// Type is nil for the x.(type) of a type switch; its cases are checked below.
			if n.Type != nil {
				if typ := namesDriverType(n.Type); typ != "" {
					out = append(out, fset.Position(n.Pos()).String()+": type assertion to "+typ)
				}
			}
		case *ast.TypeSwitchStmt:
			for _, stmt := range n.Body.List {
				for _, expr := range stmt.(*ast.CaseClause).List {
					if typ := namesDriverType(expr); typ != "" {
						out = append(out, fset.Position(expr.Pos()).String()+": type switch case "+typ)
					}
				}
			}
		}
		return true
	})
	return out
}

// TestSeamViolationsCatchesPlants keeps the check above honest: each planted
// violation is reported, and code that only uses the contract's types is not.
func TestSeamViolationsCatchesPlants(t *testing.T) {
	const header = "package gateway\n\nimport \"github.com/anysqs/anysqs/drivers\"\n\n"
	const importSQLite = "import sq \"github.com/anysqs/anysqs/drivers/sqlite\"\n\n"
	for _, tc := range []struct {
		name, body string
		want       []string // substrings of the expected reports, in order
	}{
		{"contract types only", "func f(d drivers.Driver, k drivers.Kind) {\n\tswitch k {\n\tcase drivers.KindNotFound:\n\t}\n\t_ = d\n}\n",
			nil},
		{"the SQS rules", "import \"github.com/anysqs/anysqs/drivers/sqsrule\"\n\nconst _ = sqsrule.MaxDelaySeconds\n",
			nil},
		{"import", importSQLite + "var _ sq.Options\n",
			[]string{"imports driver package " + driversPath + "/sqlite"}},
		{"assertion", importSQLite + "func f(d drivers.Driver) { _ = d.(*sq.Driver) }\n",
			[]string{"imports driver package", "type assertion to " + driversPath + "/sqlite.Driver"}},
		{"switch on a driver package", importSQLite + "func f(d drivers.Driver) {\n\tswitch d.(type) {\n\tcase nil, *sq.Driver:\n\t}\n}\n",
			[]string{"imports driver package", "type switch case " + driversPath + "/sqlite.Driver"}},
		{"switch on a contract type", "func f(x any) {\n\tswitch v := x.(type) {\n\tcase []*drivers.Error:\n\t\t_ = v\n\t}\n}\n",
			[]string{"type switch case " + driversPath + ".Error"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "plant.go", header+tc.body, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := seamViolations(fset, f)
			if len(got) != len(tc.want) {
				t.Fatalf("reports %q, want %d matching %q", got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("report %d is %q, want it to contain %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// pureImports lists, for each of the gateway's pure packages (request authentication,
// policy evaluation, the wire codecs), the only module packages it may import: none of
// drivers, capabilities or the gateway's server, so that each can be read, tested and
// fuzzed alone.
var pureImports = map[string][]string{
	"auth":   {"github.com/anysqs/anysqs/gateway/sqserr"},
	"policy": {"github.com/anysqs/anysqs/gateway/sqserr"},
	"wire":   {"github.com/anysqs/anysqs/gateway/sqserr"},
	"sqserr": nil,
}

// TestPurePackages: the pure packages import only what pureImports allows of the module.
func TestPurePackages(t *testing.T) {
	fset := token.NewFileSet()
	for dir, allowed := range pureImports {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if strings.HasPrefix(p, "github.com/anysqs/anysqs") && !slices.Contains(allowed, p) {
					t.Errorf("%s imports %s: package %s may import only %v of this module", name, p, dir, allowed)
				}
			}
		}
	}
}

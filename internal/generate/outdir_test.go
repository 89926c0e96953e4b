package generate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOnlyOutdirTouchesTheOutputTree: every read, write, walk and removal
// of -out goes through the os.Root of outdir.go, so no link can take one
// outside -out; no other file of the package calls the os or filepath
// functions that touch files by path.
func TestOnlyOutdirTouchesTheOutputTree(t *testing.T) {
	byPath := map[string]bool{
		"os.Create": true, "os.Open": true, "os.OpenFile": true, "os.ReadFile": true, "os.WriteFile": true,
		"os.Mkdir": true, "os.MkdirAll": true, "os.Remove": true, "os.RemoveAll": true, "os.Rename": true,
		"os.Stat": true, "os.Lstat": true, "os.ReadDir": true, "os.Symlink": true, "os.Readlink": true,
		"os.DirFS": true, "os.Chmod": true, "os.Truncate": true, "filepath.Walk": true, "filepath.WalkDir": true,
		"filepath.Glob": true, "filepath.EvalSymlinks": true,
	}
	sources, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, name := range sources {
		if strings.HasSuffix(name, "_test.go") || name == "outdir.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok {
				call := pkg.Name + "." + sel.Sel.Name
				assert.False(t, byPath[call], "%s: %s touches files by path; go through outDir", fset.Position(sel.Pos()), call)
			}
			return true
		})
	}
}

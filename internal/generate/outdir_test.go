package generate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOnlyOutdirTouchesTheOutputTree: every read, write, walk and removal
// of -out goes through the os.Root of outdir*.go, so no link can take one
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
		if strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "outdir") {
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

// TestWriteReplacesAHardLinkNotItsTarget: a file under -out that is a
// hard link to a file outside it is replaced by dlgen's own file; the
// outside file keeps its content, and what dlgen writes keeps the mode
// the replaced file had.
func TestWriteReplacesAHardLinkNotItsTarget(t *testing.T) {
	work := t.TempDir()
	out := filepath.Join(work, "out")
	files, err := Files(Options{Schema: defaultSchema(t), Langs: []string{"c"}})
	require.NoError(t, err)
	_, err = Write(out, files)
	require.NoError(t, err)
	header := filepath.Join(out, "c", "dlpack", "dlpack.h")
	victim := filepath.Join(work, "victim.h")
	require.NoError(t, os.WriteFile(victim, []byte("precious\n"), 0o640))
	require.NoError(t, os.Remove(header))
	require.NoError(t, os.Link(victim, header))
	before, err := os.ReadDir(filepath.Dir(header))
	require.NoError(t, err)

	written, err := Write(out, files)
	require.NoError(t, err)
	assert.Equal(t, []string{header}, written)
	content, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.True(t, string(content) == "precious\n", "dlgen wrote through a hard link to a file outside -out")
	content, err = os.ReadFile(header)
	require.NoError(t, err)
	assert.True(t, string(files[0].Content) == string(content), "dlgen's header is in place")
	info, err := os.Stat(header)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), info.Mode().Perm(), "the replaced file's mode")
	after, err := os.ReadDir(filepath.Dir(header))
	require.NoError(t, err)
	assert.Equal(t, before, after, "no temporary file is left")
}

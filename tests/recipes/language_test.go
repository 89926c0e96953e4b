package recipes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/require"
)

// luaBackend is a language as contributing.md's "Adding a language" has
// one written: a backend in its own folder that registers itself.
const luaBackend = `// Package lua is the recipe test's language: each enumerator a constant
// of a Lua table.
package lua

import (
	"fmt"
	"strings"

	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/ir"
)

// Backend is the Lua backend.
type Backend struct{}

// Name is "lua".
func (Backend) Name() string { return "lua" }

func init() {
	backend.Register(backend.Registration{Name: "lua", New: func(backend.Config) backend.Backend { return Backend{} }})
}

// Generate writes lua/dlpack.lua.
func (Backend) Generate(api *ir.API) ([]backend.File, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "-- %s\n-- %s\nlocal dlpack = {}\n", backend.Marker, backend.SPDX)
	for _, d := range api.Decls {
		if e, ok := d.(*ir.Enum); ok {
			for _, v := range e.Values {
				fmt.Fprintf(&b, "dlpack.%s = %d\n", v.Name, v.Value)
			}
		}
	}
	b.WriteString("return dlpack\n")
	return []backend.File{{Path: "lua/dlpack.lua", Content: []byte(b.String())}}, nil
}
`

// luaGolden is the backend's golden test, as every backend has one.
const luaGolden = `package lua

import (
	"flag"
	"testing"

	"github.com/dlgen/dlgen/internal/backend/backendtest"
)

var update = flag.Bool("update", false, "rewrite the golden archives in testdata/")

func TestGolden(t *testing.T) { backendtest.Golden(t, "lua", *update) }
`

// TestANewLanguageIsAFolderAndALine adds a language to a copy of dlgen's
// sources as contributing.md's table says: the backend's folder (its code,
// its golden test and an archive whose output -update fills in), its
// import line, its column in the table and the manual's language list.
// dlgen then writes it by default, the driver, the CLI and the recipe's own
// test pass unchanged, and generated/ takes its output.
func TestANewLanguageIsAFolderAndALine(t *testing.T) {
	if testing.Short() {
		t.Skip("copies and rebuilds dlgen")
	}
	git := tooltest.Require(t, "git")
	root, copyDir := tooltest.Root(), t.TempDir()
	for _, p := range strings.Split(strings.TrimRight(tooltest.Run(t, root, nil, git, "ls-files", "-z", "--cached", "--others", "--exclude-standard"), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(root, p))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		require.NoError(t, err)
		write(t, filepath.Join(copyDir, p), data)
	}
	lua := filepath.Join(copyDir, "internal", "backend", "lua")
	write(t, filepath.Join(lua, "lua.go"), []byte(luaBackend))
	write(t, filepath.Join(lua, "golden_test.go"), []byte(luaGolden))
	inputs, err := os.ReadFile(filepath.Join(root, "internal", "backend", "c", "testdata", "declarations.txtar"))
	require.NoError(t, err)
	archive, _, _ := strings.Cut(string(inputs), "\n-- c/")
	write(t, filepath.Join(lua, "testdata", "declarations.txtar"), []byte(strings.ReplaceAll(archive, "./internal/backend/c", "./internal/backend/lua")+"\n"))
	edit(t, filepath.Join(copyDir, "internal", "backend", "all", "all.go"), `	_ "github.com/dlgen/dlgen/internal/backend/rust"`,
		`	_ "github.com/dlgen/dlgen/internal/backend/rust"`+"\n"+`	_ "github.com/dlgen/dlgen/internal/backend/lua"`)
	edit(t, filepath.Join(copyDir, "cmd", "dlgen", "doc.go"), "dlgen [-lang c,go,python,rust]", "dlgen [-lang c,go,lua,python,rust]")
	addColumn(t, filepath.Join(copyDir, "docs", "contributing.md"))

	tooltest.Run(t, copyDir, nil, "go", "test", "./internal/backend/lua", "-update")
	tooltest.Run(t, copyDir, nil, "go", "run", "./cmd/dlgen", "-out", "generated")
	out := tooltest.Run(t, copyDir, nil, "go", "test", "-count=1", "-short", "./internal/backend/...", "./internal/generate", "./cmd/dlgen")
	require.NotContains(t, out, "FAIL")
	tooltest.Run(t, copyDir, nil, "go", "test", "-count=1", "-run", "TestNewLanguageRecipeIsTrue|TestCheckedInOutputIsCurrent", ".", "./internal/generate")
	lib, err := os.ReadFile(filepath.Join(copyDir, "generated", "lua", "dlpack.lua"))
	require.NoError(t, err)
	require.Contains(t, string(lib), "dlpack.kDLCPU = 1\n")
	archiveOut, err := os.ReadFile(filepath.Join(lua, "testdata", "declarations.txtar"))
	require.NoError(t, err)
	require.Contains(t, string(archiveOut), "-- lua/dlpack.lua --")
}

// addColumn gives the recipe's table a column for lua, where the registry
// lists it (after go): its backend folder and its import line, nothing for
// the rows a language may go without.
func addColumn(t *testing.T, path string) {
	t.Helper()
	page, err := os.ReadFile(path)
	require.NoError(t, err)
	before, section, ok := strings.Cut(string(page), "\n## Adding a language\n")
	require.True(t, ok)
	section, after, _ := strings.Cut(section, "\n## ")
	lines := strings.Split(section, "\n")
	for i, line := range lines {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		cell := " — "
		switch {
		case strings.HasPrefix(line, "| what |"):
			cell = " lua "
		case strings.HasPrefix(line, "|---"):
			cell = "---"
		case strings.HasPrefix(line, "| the backend"):
			cell = " `internal/backend/lua/` "
		case strings.HasPrefix(line, "| its import line"):
			cell = " `internal/backend/all/all.go` "
		}
		cells = append(cells[:3], append([]string{cell}, cells[3:]...)...) // what, c, go, lua, ...
		lines[i] = "|" + strings.Join(cells, "|") + "|"
	}
	write(t, path, []byte(before+"\n## Adding a language\n"+strings.Join(lines, "\n")+"\n## "+after))
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

func edit(t *testing.T, path, old, replacement string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), old, "%s", path)
	write(t, path, []byte(strings.Replace(string(data), old, replacement, 1)))
}

package dist

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dlgen/dlgen"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoGenerateRecipe follows cmd/dlgen's package doc in a new module:
// dlgen as a tool of the module, its //go:generate line, a build of what
// it wrote, and the CI check, which fails once a generated file is edited.
// The module takes dlgen from this checkout (a replace directive) and the
// modules dlgen needs from this machine's cache, never the network.
func TestGoGenerateRecipe(t *testing.T) {
	env := moduleEnv
	doc, err := os.ReadFile(filepath.Join(tooltest.Root(), "cmd", "dlgen", "doc.go"))
	require.NoError(t, err)
	line := func(pattern string) string { // pattern has one group: what the line says
		m := regexp.MustCompile(`(?m)^//\t` + pattern + `$`).FindStringSubmatch(string(doc))
		require.NotNil(t, m, "cmd/dlgen's doc has no line %s", pattern)
		return m[1]
	}
	generate := line(`(//go:generate go tool dlgen .*)`)
	check := strings.Fields(line(`(go tool dlgen .* -check)`))

	module := toolModule(t, "example.com/tensors")
	source := "package tensors\n\n" + generate + "\n\nimport \"example.com/tensors/internal/go/dlpack\"\n\n// T is DLPack's tensor.\ntype T = dlpack.Tensor\n"
	require.NoError(t, os.WriteFile(filepath.Join(module, "tensors.go"), []byte(source), 0o644))

	tooltest.Run(t, module, env, "go", "generate", "./...")
	tooltest.Run(t, module, env, "go", "build", "./...")
	out := tooltest.Run(t, module, env, check[0], check[1:]...)
	assert.Empty(t, out)
	assert.Equal(t, "dlgen "+dlgen.Tag+"\n", tooltest.Run(t, module, env, "go", "tool", "dlgen", "-version"))

	generated := filepath.Join(module, "internal", "go", "dlpack", "dlpack.go")
	text, err := os.ReadFile(generated)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(generated, append(text, "\n// edited by hand\n"...), 0o644))
	out, err = tooltest.Try(module, env, check[0], check[1:]...)
	tooltest.Exited(t, err, "an edited file passed the check")
	assert.Contains(t, out, "-// edited by hand\n")
	assert.Contains(t, out, "internal is stale")
}

// moduleEnv keeps the scratch modules off the network: dlgen comes from
// this checkout, the modules it needs from this machine's cache.
var moduleEnv = []string{"GOPROXY=off", "GOWORK=off"}

// toolModule makes a new module named path that has dlgen as a tool, taken
// from this checkout (a replace directive), and returns its directory.
func toolModule(t *testing.T, path string) string {
	root := tooltest.Root()
	module := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(module, "go.mod"), []byte("module "+path+"\n\ngo 1.24.0\n"), 0o644))
	sums, err := os.ReadFile(filepath.Join(root, "go.sum")) // dlgen's dependencies, verified
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(module, "go.sum"), sums, 0o644))
	tooltest.Run(t, module, moduleEnv, "go", "mod", "edit", "-require=github.com/dlgen/dlgen@"+dlgen.Tag, "-replace=github.com/dlgen/dlgen="+root)
	tooltest.Run(t, module, moduleEnv, "go", "get", "-tool", "github.com/dlgen/dlgen/cmd/dlgen")
	return module
}

// TestReadmeGoSnippetsWorkTogether puts the README's two Go snippets in one
// module, as a reader would: the package its //go:generate line writes
// into the module, and dltensor importing that package's managed tensor
// (which was a type error while dltensor took only its own copy's type).
// The program builds, vets, and at run time Import gets past the type's
// layout check to the tensor itself. docs/go.md and docs/ci.md give the
// same //go:generate line.
func TestReadmeGoSnippetsWorkTogether(t *testing.T) {
	tooltest.Require(t, "gcc") // dltensor exchanges through cgo
	readme, err := os.ReadFile(filepath.Join(tooltest.Root(), "README.md"))
	require.NoError(t, err)
	section := string(readme)[strings.Index(string(readme), "### Go"):]
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(section, 2)
	require.Len(t, blocks, 2, "the README's Go section has two Go snippets")
	generateLine, exchange := strings.TrimSpace(blocks[0][1]), blocks[1][1]
	require.True(t, strings.HasPrefix(generateLine, "//go:generate go tool dlgen -lang go "), generateLine)
	for _, page := range []string{"docs/go.md", "docs/ci.md"} {
		text, err := os.ReadFile(filepath.Join(tooltest.Root(), filepath.FromSlash(page)))
		require.NoError(t, err)
		assert.Contains(t, string(text), "```go\n"+generateLine+"\n```", "%s gives the README's //go:generate line", page)
	}
	require.Contains(t, exchange, "dltensor.Import(foreign)")

	module := toolModule(t, "example.com/goproj")
	source := "package main\n\n" + generateLine + "\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/goproj/internal/go/dlpack\"\n" +
		"\t\"github.com/dlgen/dlgen/runtime/dltensor\"\n)\n\n" +
		"// exchange is the README's snippet; foreign comes from a producer in C.\n" +
		"func exchange(foreign *dlpack.ManagedTensorVersioned) {\n" + exchange + "\t_, _, _ = m, err, v\n}\n\n" +
		"func main() {\n\t_, err := dltensor.Import((*dlpack.ManagedTensorVersioned)(nil))\n\tfmt.Println(err)\n\t_ = exchange\n}\n"
	require.NoError(t, os.WriteFile(filepath.Join(module, "main.go"), []byte(source), 0o644))
	tooltest.Run(t, module, moduleEnv, "go", "generate", "./...")
	require.FileExists(t, filepath.Join(module, "internal", "go", "dlpack", "dlpack.go"))
	tooltest.Run(t, module, moduleEnv, "go", "vet", "./...")
	exe := filepath.Join(t.TempDir(), "goproj")
	tooltest.Run(t, module, moduleEnv, "go", "build", "-o", exe, ".")
	assert.Equal(t, "dltensor: import of a NULL tensor: malformed DLPack tensor\n", tooltest.Run(t, module, nil, exe))
}

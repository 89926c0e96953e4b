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
	root := tooltest.Root()
	doc, err := os.ReadFile(filepath.Join(root, "cmd", "dlgen", "doc.go"))
	require.NoError(t, err)
	line := func(pattern string) string { // pattern has one group: what the line says
		m := regexp.MustCompile(`(?m)^//\t` + pattern + `$`).FindStringSubmatch(string(doc))
		require.NotNil(t, m, "cmd/dlgen's doc has no line %s", pattern)
		return m[1]
	}
	require.Equal(t, "go get -tool github.com/dlgen/dlgen/cmd/dlgen@latest", line(`(go get -tool \S+)`))
	generate := line(`(//go:generate go tool dlgen .*)`)
	check := strings.Fields(line(`(go tool dlgen .* -check)`))

	module := t.TempDir()
	env := []string{"GOPROXY=off", "GOWORK=off"}
	require.NoError(t, os.WriteFile(filepath.Join(module, "go.mod"), []byte("module example.com/tensors\n\ngo 1.24.0\n"), 0o644))
	sums, err := os.ReadFile(filepath.Join(root, "go.sum")) // dlgen's dependencies, verified
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(module, "go.sum"), sums, 0o644))
	tooltest.Run(t, module, env, "go", "mod", "edit", "-require=github.com/dlgen/dlgen@"+dlgen.Tag, "-replace=github.com/dlgen/dlgen="+root)
	tooltest.Run(t, module, env, "go", "get", "-tool", "github.com/dlgen/dlgen/cmd/dlgen")
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

package dist

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dlgen/dlgen"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeBlock returns the commands of the first ```sh block after the line
// of README.md that contains after, comments and blank lines dropped.
func readmeBlock(t *testing.T, after string) []string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(tooltest.Root(), "README.md"))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(readme), after)
	require.True(t, ok, "README.md has no %q", after)
	m := regexp.MustCompile("(?s)\n[ \t]*```sh\n(.*?)\n[ \t]*```").FindStringSubmatch(rest)
	require.NotNil(t, m, "README.md has no sh block after %q", after)
	return commands(m[1])
}

// commands are the commands of an sh block, comments and blank lines
// dropped.
func commands(block string) []string {
	var out []string
	for _, line := range strings.Split(block, "\n") {
		if cmd, _, _ := strings.Cut(line, " #"); strings.TrimSpace(cmd) != "" {
			out = append(out, strings.TrimSpace(cmd))
		}
	}
	return out
}

// TestReadmeGoToolRecipe runs the README's recipe for dlgen as a tool of
// one's own Go module, its text as written, in a new module beside a
// checkout named ../dlgen (a link to this one), through a module mirror
// that refuses what it does not hold with 403 (goproxy_test.go): the
// recipe asks it for nothing it does not hold, github.com/dlgen/dlgen
// included.
func TestReadmeGoToolRecipe(t *testing.T) {
	commands := readmeBlock(t, "In your own Go module")
	require.NotEmpty(t, commands)
	assert.Contains(t, commands[0], "-require=github.com/dlgen/dlgen@"+dlgen.Tag+" ", "the recipe requires this release")
	dir := t.TempDir()
	require.NoError(t, os.Symlink(tooltest.Root(), filepath.Join(dir, "dlgen")))
	module := filepath.Join(dir, "myproj")
	require.NoError(t, os.Mkdir(module, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(module, "go.mod"), []byte("module example.com/myproj\n\ngo 1.24.0\n"), 0o644))
	env, refused := mirrorEnv(t, http.StatusForbidden)
	var out string
	for _, cmd := range commands {
		out = tooltest.Run(t, module, env, "sh", "-c", cmd)
	}
	assert.Equal(t, "dlgen "+dlgen.Tag+"\n", out, "the recipe's last command")
	assert.Empty(t, refused.Paths(), "the recipe asked the mirror for what it does not hold")
}

// TestFirstCommandLeavesTheCloneClean runs the README's first command in a
// fresh copy of this checkout (its files that git does not ignore, committed
// in a new repository): git status stays clean, and go vet ./... passes
// without reaching into what dlgen wrote.
func TestFirstCommandLeavesTheCloneClean(t *testing.T) {
	if testing.Short() {
		t.Skip("copies the checkout and vets it whole")
	}
	tooltest.Require(t, "git")
	root := tooltest.Root()
	first := readmeFirstCommand(t)
	require.True(t, strings.HasPrefix(first, "go run ./cmd/dlgen "), first)

	clone := t.TempDir()
	files := tooltest.Run(t, root, nil, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	for _, f := range strings.Split(strings.TrimRight(files, "\x00"), "\x00") {
		info, err := os.Lstat(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		require.NoError(t, err)
		if !info.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(clone, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(clone, f), data, info.Mode().Perm()))
	}
	git := []string{"-c", "user.name=dlgen", "-c", "user.email=dlgen@example.invalid", "-c", "commit.gpgsign=false"}
	tooltest.Run(t, clone, nil, "git", "init", "-q")
	tooltest.Run(t, clone, nil, "git", append(git, "add", "-A")...)
	tooltest.Run(t, clone, nil, "git", append(git, "commit", "-q", "-m", "clone")...)

	tooltest.Run(t, clone, []string{"GOFLAGS=-mod=mod", "GOWORK=off"}, "sh", "-c", first)
	assert.Empty(t, tooltest.Run(t, clone, nil, "git", "status", "--porcelain"), "git status after %q", first)
	out := filepath.Join(clone, strings.Fields(first)[len(strings.Fields(first))-1])
	require.DirExists(t, filepath.Join(out, "go", "dlpack"), "the first command wrote the Go package")
	packages := tooltest.Run(t, clone, []string{"GOWORK=off"}, "go", "list", "./...")
	assert.NotContains(t, packages, "/out/", "go list ./... reaches into what dlgen wrote")
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir, cmd.Env = clone, append(os.Environ(), "GOWORK=off")
	vet, err := cmd.CombinedOutput()
	assert.NoError(t, err, "go vet ./... after %q:\n%s", first, vet)
}

// readmeFirstCommand is the first command of README.md's first code block.
func readmeFirstCommand(t *testing.T) string {
	readme, err := os.ReadFile(filepath.Join(tooltest.Root(), "README.md"))
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)```sh\n([^\n#]*)").FindStringSubmatch(string(readme))
	require.NotNil(t, m, "README.md has no sh block")
	return strings.TrimSpace(m[1])
}

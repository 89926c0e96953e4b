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

// workflows are the GitHub Actions workflows of the repository.
func workflows(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join(tooltest.Root(), ".github", "workflows", "*.yml"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no workflow under .github/workflows")
	return files
}

// TestWorkflowsLint runs actionlint and zizmor (offline), pinned and
// installed by scripts/deps.sh, over every workflow: syntax, expressions,
// shell, and workflow security (template injection, unpinned actions,
// excessive permissions, credentials left in checkouts).
func TestWorkflowsLint(t *testing.T) {
	root := tooltest.Root()
	for _, tool := range []struct{ path, why string }{
		{filepath.Join(root, ".cache", "bin", "actionlint"), "actionlint is not installed in .cache/bin"},
		{filepath.Join(root, ".cache", "zizmor", "bin", "zizmor"), "zizmor is not installed in .cache/zizmor"},
	} {
		if _, err := os.Stat(tool.path); err != nil {
			tooltest.Missing(t, tool.why)
		}
	}
	files := workflows(t)
	tooltest.Run(t, root, nil, filepath.Join(root, ".cache", "bin", "actionlint"), files...)
	out := tooltest.Run(t, root, nil, filepath.Join(root, ".cache", "zizmor", "bin", "zizmor"),
		append([]string{"--offline", "--no-progress", "--min-severity=low"}, files...)...)
	assert.Contains(t, out, "No findings to report")
}

// TestReleaseWorkflow: the release workflow builds the wheels with the
// Makefile's target (the one tests/dist checks), publishes by PyPI's
// trusted publishing from the pypi environment, takes its notes from
// CHANGELOG.md's entry for this release, and pins every action by commit
// with no permission granted at the top.
func TestReleaseWorkflow(t *testing.T) {
	root := tooltest.Root()
	text, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "release.yml"))
	require.NoError(t, err)
	release := string(text)
	for _, want := range []string{
		"\npermissions: {}\n", "run: make wheels", "uses: pypa/gh-action-pypi-publish@",
		"id-token: write", "name: pypi", "scripts/release-notes.sh", "gh release create",
	} {
		assert.Contains(t, release, want)
	}
	for _, file := range workflows(t) {
		text, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, m := range regexp.MustCompile(`(?m)^\s*-?\s*uses:\s*(\S+)`).FindAllStringSubmatch(string(text), -1) {
			assert.Regexp(t, `@[0-9a-f]{40}$`, m[1], "%s: action %s is not pinned by commit", filepath.Base(file), m[1])
		}
	}
	notes := tooltest.Run(t, root, nil, filepath.Join(root, "scripts", "release-notes.sh"), dlgen.Version)
	assert.NotEmpty(t, strings.TrimSpace(notes), "CHANGELOG.md's entry for %s", dlgen.Version)
	assert.NotContains(t, notes, "## [", "the notes are one release's")
}

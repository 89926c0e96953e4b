package dist

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitIdentity lets the scratch repositories commit on any machine.
var gitIdentity = []string{"GIT_AUTHOR_NAME=dlgen test", "GIT_AUTHOR_EMAIL=test@dlgen.invalid",
	"GIT_COMMITTER_NAME=dlgen test", "GIT_COMMITTER_EMAIL=test@dlgen.invalid"}

// hookRepository commits the files of this checkout that git sees (tracked,
// or new and not ignored) into a new repository, as a user's pre-commit
// would clone this repository at a release, and returns its path and commit.
func hookRepository(t *testing.T) (dir, commit string) {
	root := tooltest.Root()
	listing, err := tooltest.Try(root, nil, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		tooltest.Missing(t, "this checkout is not a git repository: "+listing)
	}
	dir = t.TempDir()
	for _, name := range strings.Split(strings.TrimSuffix(listing, "\x00"), "\x00") {
		src := filepath.Join(root, filepath.FromSlash(name))
		info, err := os.Lstat(src)
		if os.IsNotExist(err) || err == nil && !info.Mode().IsRegular() {
			continue // deleted in the work tree, or a link
		}
		require.NoError(t, err)
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		dst := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		require.NoError(t, os.WriteFile(dst, data, info.Mode().Perm()))
	}
	tooltest.Run(t, dir, nil, "git", "init", "-q")
	tooltest.Run(t, dir, nil, "git", "add", "-A")
	tooltest.Run(t, dir, gitIdentity, "git", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "dlgen")
	return dir, strings.TrimSpace(tooltest.Run(t, dir, nil, "git", "rev-parse", "HEAD"))
}

// TestPreCommitHookFailsOnDrift runs the dlgen-check hook with pre-commit
// from PyPI (scripts/deps.sh installs it in .venv-precommit) in a scratch
// project that vendors a C header: a fresh copy passes, a hand-edited one
// fails with the diff, and the command the failure names fixes it.
func TestPreCommitHookFailsOnDrift(t *testing.T) {
	preCommit := filepath.Join(tooltest.Root(), ".venv-precommit", "bin", "pre-commit")
	if _, err := os.Stat(preCommit); err != nil {
		tooltest.Missing(t, "pre-commit is not installed in .venv-precommit")
	}
	tooltest.Require(t, "git")
	gomodcache := strings.TrimSpace(tooltest.Run(t, "", nil, "go", "env", "GOMODCACHE"))
	hooks, commit := hookRepository(t)

	project := t.TempDir()
	tooltest.Run(t, project, nil, "git", "init", "-q")
	flags := []string{"-lang", "c", "-dlpack-version", "1.3", "-out", "third_party"}
	tooltest.Run(t, project, nil, tooltest.Dlgen(t), flags...)
	config := "repos:\n  - repo: " + hooks + "\n    rev: " + commit + "\n    hooks:\n      - id: dlgen-check\n" +
		"        args: [-lang, c, -dlpack-version, \"1.3\", -out, third_party]\n"
	require.NoError(t, os.WriteFile(filepath.Join(project, ".pre-commit-config.yaml"), []byte(config), 0o644))
	tooltest.Run(t, project, nil, "git", "add", "-A")
	tooltest.Run(t, project, gitIdentity, "git", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "vendor dlgen's header")

	// pre-commit builds the hook with `go install ./...` in its own GOPATH:
	// modules come from this machine's cache, never the network, and with
	// cgo off, as on a machine without a C compiler.
	env := []string{"PRE_COMMIT_HOME=" + t.TempDir(), "GOMODCACHE=" + gomodcache, "GOPROXY=off", "CGO_ENABLED=0"}
	passed := regexp.MustCompile(`(?m)^dlgen -check\.+Passed$`)
	out, err := tooltest.Try(project, env, preCommit, "run", "--all-files")
	require.NoError(t, err, out)
	assert.Regexp(t, passed, out)

	header := filepath.Join(project, "third_party", "c", "dlpack", "dlpack.h")
	text, err := os.ReadFile(header)
	require.NoError(t, err)
	edited := strings.Replace(string(text), "#define DLPACK_MINOR_VERSION 3\n", "#define DLPACK_MINOR_VERSION 4\n", 1)
	require.NotEqual(t, string(text), edited)
	require.NoError(t, os.WriteFile(header, []byte(edited), 0o644))
	tooltest.Run(t, project, nil, "git", "add", "-A")
	out, err = tooltest.Try(project, env, preCommit, "run")
	tooltest.Exited(t, err, "a hand-edited header passed:\n%s", out)
	assert.Regexp(t, `(?m)^dlgen -check\.+Failed$`, out)
	assert.Contains(t, out, "\n-#define DLPACK_MINOR_VERSION 4\n+#define DLPACK_MINOR_VERSION 3\n")
	// The hint is a command that works here, where no dlgen is on PATH:
	// the hook's own, with its flags less -check.
	hint := regexp.MustCompile(`dlgen: third_party is stale; run the hook's dlgen without -check to update it:\n  (\S+) (.*)\n`).FindStringSubmatch(out)
	require.NotNil(t, hint, out)
	assert.Equal(t, strings.Join(flags, " "), hint[2])
	tooltest.Run(t, project, env, "sh", "-c", hint[1]+" "+hint[2])
	tooltest.Run(t, project, nil, "git", "add", "-A")
	out, err = tooltest.Try(project, env, preCommit, "run")
	require.NoError(t, err, out)
	assert.Regexp(t, passed, out)
}

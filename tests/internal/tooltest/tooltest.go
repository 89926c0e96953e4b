// Package tooltest finds the external tools that cross-language tests need
// (compilers, objcopy, the upstream headers) and builds dlgen for them.
//
// A missing tool skips the test, unless DLGEN_REQUIRE_TOOLS=1 (set by the
// README's test command), in which case it fails it: CI must never pass by
// skipping.
package tooltest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Require returns the path of the executable name, or skips (fails under
// DLGEN_REQUIRE_TOOLS=1) when it is not installed.
func Require(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name+" is not installed")
	}
	return path
}

// Missing skips t, or fails it when tools are required.
func Missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("DLGEN_REQUIRE_TOOLS") == "1" {
		t.Fatalf("%s (DLGEN_REQUIRE_TOOLS=1; run `make deps`)", why)
	}
	t.Skip(why + "; run `make deps` to install it")
}

// Run runs a command and fails t with its output if it fails.
func Run(t testing.TB, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := Try(dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// Try runs a command and returns its combined output.
func Try(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.String(), err
}

// Root returns the repository root.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
	buildOut  string
)

// Dlgen builds cmd/dlgen once per test binary and returns its path.
func Dlgen(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dlgen-bin")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "dlgen")
		buildOut, buildErr = Try(Root(), nil, "go", "build", "-o", binary, "./cmd/dlgen")
	})
	if buildErr != nil {
		t.Fatalf("building dlgen: %v\n%s", buildErr, buildOut)
	}
	return binary
}

// Exited fails t unless err says that a command ran and exited with a
// failure status (an *exec.ExitError), not that it could not start: a
// command expected to fail must fail for its own reason, which the caller
// then checks in its output.
func Exited(t testing.TB, err error, format string, args ...any) {
	t.Helper()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("%s: want a failure exit status, got %v", fmt.Sprintf(format, args...), err)
	}
}

// Package tvmffi proves dltensor against a C++ runtime nobody here wrote:
// tvm-ffi (the apache-tvm-ffi wheel's libtvm_ffi.so). It finds tvm-ffi at
// run time with tvm-ffi-config (in .venv, or on PATH) and runs the cgo
// tests of ./exchange against it, under -race and again under
// GOEXPERIMENT=cgocheck2. Without tvm-ffi the test is skipped, or fails
// under DLGEN_REQUIRE_TOOLS=1.
package tvmffi

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/assert"
)

// config runs tvm-ffi-config with one flag.
func config(t *testing.T, tool, flag string) string {
	return strings.TrimSpace(tooltest.Run(t, "", nil, tool, flag))
}

func TestDLTensorAgainstTVMFFI(t *testing.T) {
	tool := filepath.Join(tooltest.Root(), ".venv", "bin", "tvm-ffi-config")
	if _, err := exec.LookPath(tool); err != nil {
		tool = tooltest.Require(t, "tvm-ffi-config")
	}
	include, libdir := config(t, tool, "--includedir"), config(t, tool, "--libdir")
	env := []string{
		"CGO_ENABLED=1",
		"CGO_CFLAGS=-I" + include + " -I" + config(t, tool, "--dlpack-includedir"),
		"CGO_LDFLAGS=-L" + libdir + " -ltvm_ffi -Wl,-rpath," + libdir,
	}
	for _, run := range []struct {
		name string
		env  []string
		args []string
	}{
		{"race", nil, []string{"-race"}},
		{"cgocheck2", []string{"GOEXPERIMENT=cgocheck2"}, nil},
	} {
		t.Run(run.name, func(t *testing.T) {
			args := append([]string{"test", "-count=1", "-v", "-tags", "tvmffi"}, run.args...)
			out := tooltest.Run(t, tooltest.Root(), append(env, run.env...), "go", append(args, "./tests/tvmffi/exchange")...)
			assert.Contains(t, out, "--- PASS: TestGoTensorThroughTVMFFIAndBack")
			assert.Contains(t, out, "--- PASS: TestTVMFFITensorIntoGo")
			assert.NotContains(t, out, "--- SKIP")
			t.Log(out)
		})
	}
}

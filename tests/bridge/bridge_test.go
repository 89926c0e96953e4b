// Package bridge tests the c-shared library (./examples/gobridge) from C: a consumer
// built with AddressSanitizer, UndefinedBehaviorSanitizer and
// LeakSanitizer, and the same consumer under valgrind memcheck.
package bridge

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	libOnce sync.Once
	libDir  string
	libErr  error
	libOut  string
)

// library builds libdlgen.so (and libdlgen.h) once.
func library(t *testing.T) string {
	tooltest.Require(t, "gcc")
	libOnce.Do(func() {
		libDir, libErr = os.MkdirTemp("", "libdlgen")
		if libErr == nil {
			libOut, libErr = tooltest.Try(tooltest.Root(), nil, "go", "build", "-buildmode=c-shared",
				"-o", filepath.Join(libDir, "libdlgen.so"), "./examples/gobridge")
		}
	})
	if libErr != nil {
		t.Fatalf("building the bridge: %v\n%s", libErr, libOut)
	}
	return libDir
}

func consumer(t *testing.T, flags ...string) string { return program(t, "consumer.c", flags...) }

// program compiles testdata/source against the library.
func program(t *testing.T, source string, flags ...string) string {
	lib := library(t)
	exe := filepath.Join(t.TempDir(), strings.TrimSuffix(source, ".c"))
	args := append([]string{"-std=c11", "-Wall", "-Wextra", "-Werror", "-g",
		"-I", filepath.Join(tooltest.Root(), "generated", "c"), "-I", lib}, flags...)
	args = append(args, filepath.Join("testdata", source), filepath.Join(lib, "libdlgen.so"), "-lpthread", "-Wl,-rpath,"+lib, "-o", exe)
	tooltest.Run(t, "", nil, "gcc", args...)
	return exe
}

var sanitizers = []string{"-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"}

func TestCConsumerUnderSanitizers(t *testing.T) {
	exe := consumer(t, sanitizers...)
	env := []string{"ASAN_OPTIONS=detect_leaks=1:abort_on_error=0", "UBSAN_OPTIONS=print_stacktrace=1"}
	out := tooltest.Run(t, "", env, exe)
	assert.Contains(t, out, "all checks passed")
}

// TestEveryMisuseIsAnErrorCode drives each exported function with bad
// handles (0, unknown, closed) and bad arguments from C: each answers with
// a DLGEN_E* code and the host process lives on.
func TestEveryMisuseIsAnErrorCode(t *testing.T) {
	exe := program(t, "misuse.c", sanitizers...)
	out := tooltest.Run(t, "", []string{"ASAN_OPTIONS=detect_leaks=1"}, exe)
	assert.Contains(t, out, "every call answered with an error code")
}

// TestLeakSanitizerSeesAnUndeletedExport proves the leak check bites: an
// export whose deleter never runs is reported.
func TestLeakSanitizerSeesAnUndeletedExport(t *testing.T) {
	exe := consumer(t, append(sanitizers, "-DDLGEN_LEAK_ONE")...)
	out, err := tooltest.Try("", []string{"ASAN_OPTIONS=detect_leaks=1"}, exe)
	tooltest.Exited(t, err, "%s", out)
	assert.Contains(t, out, "LeakSanitizer: detected memory leaks")
	assert.Contains(t, out, "dlgen_alloc_versioned")
}

// Go manages its goroutine stacks and heap in anonymous mappings that
// memcheck does not understand; accesses there are not errors. Anything
// touching malloc'd memory, or any other kind of error, is.
var (
	errorStart  = regexp.MustCompile(`^==\d+== (Invalid (read|write|free)|Conditional jump|Use of uninitialised|Syscall param|Mismatched free|Source and destination overlap)`)
	goManaged   = regexp.MustCompile(`is in a rw- anonymous segment|is on thread \d+'s stack`)
	goFrame     = regexp.MustCompile(`^==\d+==    at 0x[0-9A-F]+: (runtime\.|_cgoexp_|github\.com/|main\.)`)
	leakSummary = regexp.MustCompile(`(definitely|indirectly|possibly) lost: ([\d,]+) bytes`)
	blockEnd    = regexp.MustCompile(`^==\d+== $`)
)

// classify splits memcheck's error reports into those about Go-managed
// memory (counted) and real ones (returned).
func classify(log string) (goNoise int, real []string) {
	lines := strings.Split(log, "\n")
	for i := 0; i < len(lines); i++ {
		if !errorStart.MatchString(lines[i]) {
			continue
		}
		j := i + 1
		for j < len(lines) && !blockEnd.MatchString(lines[j]) {
			j++
		}
		block := strings.Join(lines[i:j], "\n")
		uninit := strings.Contains(lines[i], "uninitialised") || strings.Contains(lines[i], "Conditional")
		if goManaged.MatchString(block) || uninit && i+1 < len(lines) && goFrame.MatchString(lines[i+1]) {
			goNoise++
		} else {
			real = append(real, block)
		}
		i = j
	}
	return goNoise, real
}

func TestCConsumerUnderValgrind(t *testing.T) {
	tooltest.Require(t, "valgrind")
	exe := consumer(t)
	logFile := filepath.Join(t.TempDir(), "valgrind.log")
	out, err := tooltest.Try("", nil, "valgrind", "--leak-check=full", "--show-leak-kinds=definite,indirect,possible",
		"--suppressions=testdata/go-runtime.supp", "--log-file="+logFile, exe)
	require.NoError(t, err, out)
	assert.Contains(t, out, "all checks passed")
	raw, err := os.ReadFile(logFile)
	require.NoError(t, err)
	goNoise, real := classify(string(raw))
	assert.Empty(t, real, "memcheck errors outside Go-managed memory")
	for _, m := range leakSummary.FindAllStringSubmatch(string(raw), -1) {
		assert.Equal(t, "0", m[2], "%s lost", m[1])
	}
	t.Logf("valgrind: 0 errors in C or malloc'd memory, 0 leaks; %d reports about Go-managed stacks ignored", goNoise)
}

// TestClassifyKeepsRealErrors pins the classifier on reports seen while
// developing: a use-after-free of a C block from Go code is real, reads of
// goroutine stacks are not.
func TestClassifyKeepsRealErrors(t *testing.T) {
	log := `==1751== Invalid read of size 4
==1751==    at 0x4926E52: github.com/dlgen/dlgen/runtime/dltensor.Import (import.go:57)
==1751==  Address 0x5445c80 is 0 bytes inside a block of size 80 free'd
==1751==    at 0x484417B: free (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==1751==    by 0x109280: c_deleter (consumer.c:26)
==1751== 
==2102== Invalid read of size 8
==2102==    at 0x4929910: _cgoexp_2a1e15521f0f_dlgen_collect (bridge.go:174)
==2102==  Address 0x244c48151e60 is in a rw- anonymous segment
==2102== 
==1680== Conditional jump or move depends on uninitialised value(s)
==1680==    at 0x48E4C7A: runtime.adjustframe (stack.go:626)
==1680== 
==1680== Conditional jump or move depends on uninitialised value(s)
==1680==    at 0x10A000: c_function (consumer.c:12)
==1680== 
`
	noise, real := classify(log)
	assert.Equal(t, 2, noise)
	require.Len(t, real, 2)
	assert.Contains(t, real[0], "dltensor.Import")
	assert.Contains(t, real[1], "c_function")
}

// Package chelpers proves the C helper header (c/dlpack/dlpack_helpers.h):
// the conformance corpus through its checks, natively, for i686, under
// AddressSanitizer and UndefinedBehaviorSanitizer and through its _MSC_VER
// branch, and a warning-free build of every release's header in every
// language mode, on the targets the C header's tests use, under clang's
// MSVC driver (clang-cl, not MSVC) and with MinGW-w64.
package chelpers

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/conformance/corpus"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/dlgen/dlgen/tests/abi"
	"github.com/dlgen/dlgen/tests/internal/corpustest"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/require"
)

// generate writes the C output of one release into a fresh directory and
// returns its include directory (holding dlpack.h and dlpack_helpers.h).
func generate(t *testing.T, version string) string {
	t.Helper()
	dir := t.TempDir()
	tooltest.Run(t, "", nil, tooltest.Dlgen(t), "-lang", "c", "-dlpack-version", version, "-out", dir)
	return filepath.Join(dir, "c", "dlpack")
}

func releases(t *testing.T) []string {
	t.Helper()
	s, err := schema.Default()
	require.NoError(t, err)
	var out []string
	for _, r := range s.Releases {
		out = append(out, r.Version.String())
	}
	return out
}

// TestCorpusWithTheCHelpers runs the conformance corpus
// through dlgen_check_versioned and dlgen_check_legacy of the newest
// release (the corpus's): every case gets the verdict, the rule and the
// words the corpus says, the deleter runs exactly once (at the refusal, or
// after the accepted tensor is read, not before), and the byte range of an
// accepted tensor in a buffer lies inside it. It runs on this machine under
// AddressSanitizer and UndefinedBehaviorSanitizer (any report aborts) and
// for i686 (the cases of 32-bit pointers), and once more with clang
// through the header's _MSC_VER branch (static __inline), which MSVC's C
// takes: forced on Linux, so LP64 and glibc, not MSVC's LLP64 and CRT.
func TestCorpusWithTheCHelpers(t *testing.T) {
	c, err := corpus.Load()
	require.NoError(t, err)
	rs := releases(t)
	newest := rs[len(rs)-1]
	if newest == "main" {
		newest = rs[len(rs)-2]
	}
	require.Equal(t, fmt.Sprintf("%d.%d", c.Consumer[0], c.Consumer[1]), newest,
		"the corpus is written for another release than the newest: update it")
	include := generate(t, newest)
	src := filepath.Join(tooltest.Root(), "tests", "chelpers", "testdata", "importer.c")
	sanitized := []string{"-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"}
	runs := []struct {
		name, cc string
		bits     int
		args     []string
		inline   string // the header's DLGEN_INLINE in this build: which branch of its #if it takes
	}{
		{"gcc, ASan and UBSan", "gcc", 64, sanitized, "static inline"},
		{"i686", "i686-linux-gnu-gcc", 32, []string{"-O2", "-static"}, "static inline"},
		// The branch MSVC's C takes (no __STDC_VERSION__ without /std:c11),
		// forced on this machine; glibc is told it is still C99.
		{"clang, the _MSC_VER branch, ASan and UBSan", "clang", 64,
			append([]string{"-fms-extensions", "-U__STDC_VERSION__", "-D_MSC_VER=1929", "-D_ISOC99_SOURCE"}, sanitized...), "static __inline"},
	}
	for _, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			tooltest.Require(t, run.cc)
			exe := filepath.Join(t.TempDir(), "importer")
			args := append([]string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", include}, run.args...)
			macros := tooltest.Run(t, "", nil, run.cc, append(args, "-dM", "-E", src)...)
			require.True(t, strings.Contains(macros, "#define DLGEN_INLINE "+run.inline+"\n"), "%s takes another branch of the header's #if than the one defining DLGEN_INLINE as %s", run.name, run.inline)
			tooltest.Run(t, "", nil, run.cc, append(args, src, "-o", exe)...)
			corpustest.Check(t, c, "the C helpers", run.name, run.bits, func(tensors []corpus.Tensor) []corpustest.Verdict {
				var input strings.Builder
				for _, tensor := range tensors {
					input.WriteString(tensor.Line() + "\n")
				}
				in := filepath.Join(t.TempDir(), "corpus.txt")
				require.NoError(t, os.WriteFile(in, []byte(input.String()), 0o644))
				out := tooltest.Run(t, "", nil, "sh", "-c", `exec "$0" < "$1"`, exe, in)
				var verdicts []corpustest.Verdict
				for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
					v, err := corpustest.Parse(line)
					require.NoError(t, err)
					verdicts = append(verdicts, v)
				}
				return verdicts
			})
		})
	}
}

// compiler is one compiler in one language mode.
type compiler struct {
	name, cmd string
	args      []string
	run       bool // the program runs on this machine
	cplus     bool
}

var strict = []string{"-Wall", "-Wextra", "-pedantic", "-Werror"}

func mode(name, cmd, std string, run bool) compiler {
	return compiler{name: name + " " + std, cmd: cmd, args: append([]string{"-std=" + std, "-O2", "-Wundef"}, strict...),
		run: run, cplus: strings.HasPrefix(std, "c++")}
}

var compilers = []compiler{
	mode("gcc", "gcc", "c89", true), mode("gcc", "gcc", "c99", true), mode("gcc", "gcc", "c11", true),
	mode("g++", "g++", "c++98", true), mode("g++", "g++", "c++11", true), mode("g++", "g++", "c++17", true),
	mode("clang", "clang", "c89", true), mode("clang", "clang", "c11", true),
	mode("clang++", "clang++", "c++98", true), mode("clang++", "clang++", "c++17", true),
	mode("i686", "i686-linux-gnu-gcc", "c89", false), mode("i686", "i686-linux-gnu-gcc", "c11", false),
	mode("aarch64", "aarch64-linux-gnu-gcc", "c99", false), mode("aarch64", "aarch64-linux-gnu-gcc", "c17", false),
}

// buildUses compiles testdata/uses.c against the v release's helpers in
// include with cc, and runs it where cc.run says. A C++98 mode is passed
// over where the release's dlpack.h itself is not C++98.
func buildUses(t *testing.T, cc compiler, v, include string) {
	t.Helper()
	uses := filepath.Join(tooltest.Root(), "tests", "chelpers", "testdata", "uses.c")
	out := t.TempDir()
	lang := []string{"-x", "c"}
	if cc.cplus {
		lang = []string{"-x", "c++"}
	}
	if cc.cplus && strings.HasSuffix(cc.name, "c++98") {
		bare := filepath.Join(out, "bare.h")
		require.NoError(t, os.WriteFile(bare, []byte("#include \"dlpack.h\"\n"), 0o644))
		if _, err := tooltest.Try("", nil, cc.cmd, append(append(append([]string{}, cc.args...), "-fsyntax-only", "-I", include), append(lang, bare)...)...); err != nil {
			return // dlpack.h of this release is not C++98
		}
	}
	exe := filepath.Join(out, "uses")
	args := append(append(append([]string{}, cc.args...), "-I", include), lang...)
	args = append(args, uses, "-o", exe)
	if !cc.run {
		args = append(args, "-c")
	}
	if msg, err := tooltest.Try("", nil, cc.cmd, args...); err != nil {
		t.Fatalf("%s rejects the v%s helpers: %v\n%s", cc.name, v, err, msg)
	}
	if cc.run {
		if msg, err := tooltest.Try("", nil, exe); err != nil {
			t.Fatalf("v%s helpers built with %s disagree with uses.c: %v\n%s", v, cc.name, err, msg)
		}
	}
}

// TestHelperHeaderCompilesEverywhere compiles and runs testdata/uses.c,
// which calls every helper, against every release's header with gcc,
// g++, clang and clang++ as C89, C99, C11, C++98, C++11 and C++17, and
// for i686 and aarch64, under -Wall -Wextra -pedantic -Werror; the
// capsule helpers with this interpreter's Python.h as C11 and C++17. C++98
// only where the release's dlpack.h itself is C++98 (before v0.7, which
// gives DLDeviceType a fixed base type).
func TestHelperHeaderCompilesEverywhere(t *testing.T) {
	for _, cc := range compilers {
		tooltest.Require(t, cc.cmd)
	}
	python := filepath.Join(tooltest.Root(), ".venv", "bin", "python")
	if _, err := os.Stat(python); err != nil {
		tooltest.Missing(t, "the test venv (.venv) is missing")
	}
	pythonInclude := strings.TrimSpace(tooltest.Run(t, "", nil, python, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"))
	pythonUses := filepath.Join(tooltest.Root(), "tests", "chelpers", "testdata", "python_uses.c")
	for _, v := range releases(t) {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			include := generate(t, v)
			for _, cc := range compilers {
				buildUses(t, cc, v, include)
			}
			for _, cc := range []compiler{mode("gcc", "gcc", "c11", false), mode("g++", "g++", "c++17", false)} {
				lang := "c"
				if cc.cplus {
					lang = "c++"
				}
				args := append(append([]string{}, cc.args...), "-fsyntax-only", "-I", include, "-I", pythonInclude, "-x", lang, pythonUses)
				if msg, err := tooltest.Try("", nil, cc.cmd, args...); err != nil {
					t.Fatalf("%s rejects the v%s capsule helpers: %v\n%s", cc.name, v, err, msg)
				}
			}
		})
	}
}

// stringH declares what the helpers use of <string.h>, for targets
// compiled without a C library (abi.ClangTarget.ClangArgs).
const stringH = `#include <stddef.h>
void *memcpy(void *to, const void *from, size_t n);
void *memset(void *to, int c, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
`

// TestHelperHeaderOnEveryClangTarget compiles testdata/uses.c as C11 and
// C++17 under -Wall -Wextra -pedantic -Werror on every clang target of
// tests/abi: every release on the measured ones (those whose layouts the
// ABI tests compare with upstream's), the newest on all.
func TestHelperHeaderOnEveryClangTarget(t *testing.T) {
	rs := releases(t)
	uses := filepath.Join(tooltest.Root(), "tests", "chelpers", "testdata", "uses.c")
	libc := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(libc, "string.h"), []byte(stringH), 0o644))
	for _, v := range rs {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			include := generate(t, v)
			for _, c := range abi.ClangTargets {
				if !c.Measured && v != rs[len(rs)-1] {
					continue
				}
				for _, lang := range [][]string{{"-x", "c", "-std=c11"}, {"-x", "c++", "-std=c++17", "-nostdinc++"}} {
					args := append(append(append(c.ClangArgs(t), strict...), "-fsyntax-only", "-isystem", libc, "-I", include), lang...)
					if msg, err := tooltest.Try("", nil, c.CC(), append(args, uses)...); err != nil {
						t.Errorf("%s %s rejects the v%s helpers: %v\n%s", c.Name(), lang[2], v, err, msg)
					}
				}
			}
		})
	}
}

// TestFuzzSeedsPass runs the fuzz target (testdata/fuzz_check.c, fuzzed by
// scripts/fuzz-c.sh) over its committed crashers, testdata/fuzz, under
// AddressSanitizer and UndefinedBehaviorSanitizer: each found a bug once
// (span-saturated: a span past 2^64 wrapped and was accepted).
func TestFuzzSeedsPass(t *testing.T) {
	tooltest.Require(t, "clang")
	rs := releases(t)
	include := generate(t, rs[len(rs)-2]) // the newest release, before main
	exe := filepath.Join(t.TempDir(), "fuzz_check")
	src := filepath.Join(tooltest.Root(), "tests", "chelpers", "testdata", "fuzz_check.c")
	if out, err := tooltest.Try("", nil, "clang", "-g", "-O1", "-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=all",
		"-I", include, src, "-o", exe); err != nil {
		tooltest.Missing(t, "clang cannot build a libFuzzer target (install libclang-rt-14-dev): "+out)
	}
	seeds, err := filepath.Glob(filepath.Join(tooltest.Root(), "tests", "chelpers", "testdata", "fuzz", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, seeds)
	tooltest.Run(t, "", nil, exe, append([]string{"-runs=0"}, seeds...)...)
}

// TestDocsCPlusPlusOwnerCompiles compiles the C++ owner of a managed tensor
// that docs/c.md shows, against the newest release's helpers.
func TestDocsCPlusPlusOwnerCompiles(t *testing.T) {
	tooltest.Require(t, "g++")
	doc, err := os.ReadFile(filepath.Join(tooltest.Root(), "docs", "c.md"))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(doc), "```cpp\n")
	require.True(t, ok, "docs/c.md has no C++ example")
	code, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	rs := releases(t)
	include := generate(t, rs[len(rs)-2])
	src := filepath.Join(t.TempDir(), "owner.cc")
	require.NoError(t, os.WriteFile(src, []byte("#include <stdexcept>\n#include <utility>\n#include \"dlpack_helpers.h\"\n"+code), 0o644))
	tooltest.Run(t, "", nil, "g++", append(append([]string{"-std=c++17", "-fsyntax-only", "-I", include}, strict...), src)...)
}

// TestHandWrittenHelpersCompileInPlace compiles internal/backend/c/runtime/dlpack_helpers.h
// where it lies, between the newest release's macros and tables (the
// generated header cut around its copy), feature blocks and all, as C11
// and C++17 with Python.h,
// so that a compiler's complaint names the hand-written file's own lines.
func TestHandWrittenHelpersCompileInPlace(t *testing.T) {
	tooltest.Require(t, "gcc")
	tooltest.Require(t, "g++")
	python := filepath.Join(tooltest.Root(), ".venv", "bin", "python")
	if _, err := os.Stat(python); err != nil {
		tooltest.Missing(t, "the test venv (.venv) is missing")
	}
	pythonInclude := strings.TrimSpace(tooltest.Run(t, "", nil, python, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"))
	source := filepath.Join(tooltest.Root(), "internal", "backend", "c", "runtime", "dlpack_helpers.h")
	code, err := os.ReadFile(source)
	require.NoError(t, err)
	rs := releases(t)
	include := generate(t, rs[len(rs)-2])
	header, err := os.ReadFile(filepath.Join(include, "dlpack_helpers.h"))
	require.NoError(t, err)
	// The header holds the file with the release's side of each feature
	// block only: cut it at the file's first and last lines.
	lines := strings.SplitAfter(strings.TrimSpace(string(code)), "\n")
	before, rest, ok := strings.Cut(string(header), lines[0])
	require.True(t, ok, "the generated header does not hold internal/backend/c/runtime/dlpack_helpers.h's first line")
	end := strings.Index(rest, lines[len(lines)-1]) // the tables have a Python section too
	require.GreaterOrEqual(t, end, 0, "the generated header does not hold internal/backend/c/runtime/dlpack_helpers.h's last line")
	after := rest[end+len(lines[len(lines)-1]):]
	guard := "#ifndef DLGEN_DLPACK_HELPERS_H_\n#define DLGEN_DLPACK_HELPERS_H_\n"
	require.Contains(t, before, guard)
	before, after = strings.Replace(before, guard, "", 1), strings.Replace(after, "#endif /* DLGEN_DLPACK_HELPERS_H_ */", "", 1)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "release.h"), []byte(before), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tables.h"), []byte(after), 0o644))
	unit := filepath.Join(dir, "unit.c")
	require.NoError(t, os.WriteFile(unit, []byte("#include <Python.h>\n#include \"release.h\"\n#include \""+source+"\"\n#include \"tables.h\"\n"), 0o644))
	for _, cc := range []compiler{mode("gcc", "gcc", "c11", false), mode("g++", "g++", "c++17", false)} {
		lang := "c"
		if cc.cplus {
			lang = "c++"
		}
		args := append(append([]string{}, cc.args...), "-fsyntax-only", "-I", include, "-I", pythonInclude, "-x", lang, unit)
		if msg, err := tooltest.Try("", nil, cc.cmd, args...); err != nil {
			t.Fatalf("%s rejects internal/backend/c/runtime/dlpack_helpers.h: %v\n%s", cc.name, err, msg)
		}
	}
}

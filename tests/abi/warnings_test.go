package abi

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/schema"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// warning is one line of a clang diagnostic, without its place: the text
// and the flag, e.g. "static_assert declarations are incompatible with
// C++98 [-Wc++98-compat]".
var warning = regexp.MustCompile(`(?m)^[^\n]*: warning: (.*)$`)

// clangWarnings compiles a file that only includes dir's dlpack/dlpack.h
// with clang -Weverything and counts its warnings by text. The compile
// must succeed.
func clangWarnings(t *testing.T, cc, dir string, std string) map[string]int {
	t.Helper()
	src := filepath.Join(t.TempDir(), "use.c")
	lang := "c"
	if strings.HasPrefix(std, "c++") {
		lang = "c++"
	}
	require.NoError(t, os.WriteFile(src, []byte("#include <dlpack/dlpack.h>\n"), 0o644))
	out, err := tooltest.Try("", nil, cc, "-x", lang, "-std="+std, "-Weverything", "-fsyntax-only", "-I", dir, src)
	require.NoError(t, err, "%s -std=%s rejects %s:\n%s", cc, std, dir, out)
	counts := map[string]int{}
	for _, m := range warning.FindAllStringSubmatch(out, -1) {
		counts[m[1]]++
	}
	return counts
}

// isolated copies an upstream header into a directory of its own, so that
// no other header beside it (libc's, in /usr/include) is found instead of
// the compiler's freestanding ones.
func isolated(t *testing.T, dir string) string {
	text, err := os.ReadFile(filepath.Join(dir, "dlpack", "dlpack.h"))
	if err != nil {
		tooltest.Missing(t, "no upstream header in "+dir+"; scripts/deps.sh fetches it")
	}
	out := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(out, "dlpack"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(out, "dlpack", "dlpack.h"), text, 0o644))
	return out
}

// TestHeaderWarnsNoMoreThanUpstreamUnderWeverything: a drop-in header
// must not break a build with -Weverything -Werror that upstream's header
// of the same release passes. Every warning clang 14 and 16 give for
// dlgen's header under -Weverything, in C and C++ of several standards,
// upstream's header gives as often (upstream's `enum : int32_t`, say,
// is -Wc++98-compat itself).
func TestHeaderWarnsNoMoreThanUpstreamUnderWeverything(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	compilers := []string{tooltest.Require(t, "clang"), tooltest.Require(t, "clang-16")}
	stds := []string{"c89", "c99", "c11", "c17", "c++98", "c++11", "c++17", "c++20"}
	for _, u := range upstreams {
		t.Run("v"+u.release.String(), func(t *testing.T) {
			theirs := isolated(t, u.dir(t))
			ours := generatedC(t, s, u.release)
			for _, cc := range compilers {
				for _, std := range stds {
					want := clangWarnings(t, cc, theirs, std)
					got := clangWarnings(t, cc, ours, std)
					for text, n := range got {
						assert.LessOrEqual(t, n, want[text], "%s -std=%s -Weverything: dlgen's v%s header warns %q %d times, %s's %d",
							filepath.Base(cc), std, u.release, text, n, u.source, want[text])
					}
				}
			}
		})
	}
}

// msvcCXX is what MSVC predefines for C++17 on x64 without
// /Zc:__cplusplus: the real language in _MSVC_LANG, 199711L in
// __cplusplus. clang's MSVC mode defines _MSC_VER, _MSVC_LANG and _WIN64
// as MSVC does; only __cplusplus must be set back by hand. The compiler
// underneath is clang, which accepts static_assert, so the guards compile
// as they would under MSVC.
var msvcCXX = []string{"--target=x86_64-pc-windows-msvc", "-fms-compatibility", "-fms-compatibility-version=19.29",
	"-std=c++17", "-U__cplusplus", "-D__cplusplus=199711L", "-Wno-builtin-macro-redefined"}

// TestGuardsAreOnUnderMSVCWithoutZcCplusplus: MSVC keeps __cplusplus at
// 199711L unless /Zc:__cplusplus is given, and says the language in
// _MSVC_LANG; the guards must read it rather than silently go off.
func TestGuardsAreOnUnderMSVCWithoutZcCplusplus(t *testing.T) {
	cc := tooltest.Require(t, "clang")
	s, err := schema.Default()
	require.NoError(t, err)
	dir := generatedC(t, s, s.Newest())
	src := filepath.Join(t.TempDir(), "use.cc")
	require.NoError(t, os.WriteFile(src, []byte(useHeader), 0o644))

	macros := tooltest.Run(t, "", nil, cc, append(append([]string{}, msvcCXX...), "-dM", "-E", "-x", "c++", os.DevNull)...)
	for _, def := range []string{"#define __cplusplus 199711L", "#define _MSVC_LANG 201703L", "#define _MSC_VER 1929", "#define _WIN64 1"} {
		require.Contains(t, macros, def+"\n", "the simulation of MSVC lacks %s", def)
	}

	out := tooltest.Run(t, "", nil, cc, append(append([]string{}, msvcCXX...), "-E", "-I", dir, src)...)
	assert.Contains(t, out, `static_assert(sizeof(DLTensor) == 48, "size of DLTensor on 64-bit")`, "no layout guards under MSVC without /Zc:__cplusplus")
	tooltest.Run(t, "", nil, cc, append(append([]string{}, msvcCXX...), "-fsyntax-only", "-Wall", "-Werror", "-I", dir, src)...)

	// _MSVC_LANG below C++11 (no MSVC has one; the test of the condition)
	// leaves them off.
	old := append(append([]string{}, msvcCXX...), "-U_MSVC_LANG", "-D_MSVC_LANG=199711L", "-E", "-I", dir, src)
	assert.NotContains(t, tooltest.Run(t, "", nil, cc, old...), "static_assert(")
	fmt.Println("layout guards on under simulated MSVC C++17 without /Zc:__cplusplus")
}

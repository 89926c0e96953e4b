package chelpers

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/require"
)

// clangCL is clang's MSVC driver (clang-cl) on MSVC's command line, as
// Visual Studio 2019 16.11 (_MSC_VER 1929), with MSVC's warning level 4 as
// errors, clang's -Wmicrosoft and -pedantic. No MSVC is installed here: /X
// drops the INCLUDE path, so only clang's own stddef.h and stdint.h are found,
// and testdata/msvc's string.h, a stand-in declaring what the helpers use
// as the Universal CRT does. It proves the header is what clang accepts with
// MSVC's predefined macros, target and language switches; not what MSVC
// itself accepts.
func clangCL(triple string) []string {
	return []string{"--driver-mode=cl", "--target=" + triple, "-fms-compatibility-version=19.29", "/X",
		"-imsvc", filepath.Join(tooltest.Root(), "tests", "chelpers", "testdata", "msvc"),
		"/W4", "/WX", "-Wmicrosoft", "/clang:-pedantic"}
}

// msvcTargets are MSVC's three Windows targets, with the macros MSVC
// defines for them and those it does not.
var msvcTargets = []struct {
	triple          string
	defined, absent []string
}{
	{"x86_64-pc-windows-msvc", []string{"_M_X64 100", "_WIN32 1", "_WIN64 1"}, nil},
	{"i686-pc-windows-msvc", []string{"_M_IX86 600", "_WIN32 1"}, []string{"_WIN64"}},
	{"aarch64-pc-windows-msvc", []string{"_M_ARM64 1", "_WIN32 1", "_WIN64 1"}, nil},
}

// msvcModes are MSVC's C and C++ modes. MSVC's C defines __STDC_VERSION__
// only under /std:c11 or /std:c17, and its C++ keeps __cplusplus at
// 199711L unless /Zc:__cplusplus is given: clang-cl does neither, so
// those two are undefined or set back by hand. The helper header's
// DLGEN_INLINE shows which branch of its #if it took: without
// __STDC_VERSION__, the _MSC_VER one. In C, the header alone is also clean
// under clang-cl's /Wall, which is clang's -Weverything (not MSVC's /Wall);
// in C++ that warns of every C cast and 0 for a null pointer.
var msvcModes = []struct {
	name            string
	args            []string
	defined, absent []string
	inline          string
	everything      bool
}{
	{"C", []string{"/TC", "-U__STDC_VERSION__"}, nil, []string{"__STDC_VERSION__", "__cplusplus"}, "static __inline", true},
	{"C /std:c11", []string{"/TC", "/std:c11"}, []string{"__STDC_VERSION__ 201112L"}, nil, "static inline", true},
	{"C /std:c17", []string{"/TC", "/std:c17"}, []string{"__STDC_VERSION__ 201710L"}, nil, "static inline", true},
	{"C++ /std:c++14", []string{"/TP", "/std:c++14", "-U__cplusplus", "-D__cplusplus=199711L"},
		[]string{"_MSVC_LANG 201402L", "__cplusplus 199711L"}, nil, "static inline", false},
	{"C++ /std:c++17", []string{"/TP", "/std:c++17", "-U__cplusplus", "-D__cplusplus=199711L"},
		[]string{"_MSVC_LANG 201703L", "__cplusplus 199711L"}, nil, "static inline", false},
	{"C++ /std:c++17 /Zc:__cplusplus", []string{"/TP", "/std:c++17", "/Zc:__cplusplus"},
		[]string{"_MSVC_LANG 201703L", "__cplusplus 201703L"}, nil, "static inline", false},
}

// TestHelperHeaderUnderClangCL compiles testdata/uses.c, which calls every
// helper, against every release's header with clang-cl (clangCL: clang's
// MSVC mode, not MSVC) for x86-64, i686 and ARM64 Windows, in MSVC's C
// (without /std, and /std:c11, /std:c17) and C++ (/std:c++14 and
// /std:c++17, with __cplusplus at 199711L as MSVC leaves it, and with
// /Zc:__cplusplus), under /W4 /WX. Before that it checks that each mode
// predefines what MSVC does (_MSC_VER, _WIN32, _WIN64, _MSVC_LANG,
// __STDC_VERSION__, __cplusplus; neither __GNUC__ nor __STDC__) and which
// branch of the header's #if it takes. The capsule helpers are not
// compiled: there is no Windows Python.h here.
func TestHelperHeaderUnderClangCL(t *testing.T) {
	tooltest.Require(t, "clang")
	uses := filepath.Join(tooltest.Root(), "tests", "chelpers", "testdata", "uses.c")
	rs := releases(t)
	newest := generate(t, rs[len(rs)-1])
	for _, target := range msvcTargets {
		for _, mode := range msvcModes {
			args := append(append(clangCL(target.triple), mode.args...), "-I", newest)
			// "--": an absolute path would read as a /switch.
			macros := tooltest.Run(t, "", nil, "clang", append(args, "/E", "/clang:-dM", "--", uses)...)
			defined := append(append([]string{"_MSC_VER 1929", "DLGEN_INLINE " + mode.inline}, target.defined...), mode.defined...)
			for _, d := range defined {
				if !strings.Contains(macros, "#define "+d+"\n") {
					t.Errorf("clang-cl %s %s: no #define %s", target.triple, mode.name, d)
				}
			}
			for _, name := range append(append([]string{"__GNUC__", "__STDC__"}, target.absent...), mode.absent...) {
				if regexp.MustCompile(`(?m)^#define ` + name + `\b`).MatchString(macros) {
					t.Errorf("clang-cl %s %s defines %s; MSVC does not", target.triple, mode.name, name)
				}
			}
		}
	}
	header := filepath.Join(t.TempDir(), "header.c")
	require.NoError(t, os.WriteFile(header, []byte("#include \"dlpack_helpers.h\"\n"), 0o644))
	for _, v := range rs {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			include := generate(t, v)
			for _, target := range msvcTargets {
				for _, mode := range msvcModes {
					args := append(append(clangCL(target.triple), mode.args...), "/Zs", "-I", include)
					if msg, err := tooltest.Try("", nil, "clang", append(args, "--", uses)...); err != nil {
						t.Errorf("clang-cl %s %s rejects the v%s helpers: %v\n%s", target.triple, mode.name, v, err, msg)
					}
					if mode.everything {
						if msg, err := tooltest.Try("", nil, "clang", append(args, "/Wall", "--", header)...); err != nil {
							t.Errorf("clang-cl %s %s /Wall warns of the v%s helpers: %v\n%s", target.triple, mode.name, v, err, msg)
						}
					}
				}
			}
		})
	}
	t.Cleanup(func() {
		if !t.Failed() {
			fmt.Printf("helper header under clang-cl: %d releases, %d Windows targets, %d MSVC language modes\n", len(rs), len(msvcTargets), len(msvcModes))
		}
	})
}

// mingw is MinGW-w64 (Debian's gcc-mingw-w64), a real Windows toolchain:
// GCC with the headers of the Windows C runtime, LLP64 on x86-64 (long
// is 32 bits). Its programs are built, not run (there is no Windows here).
var mingw = []compiler{
	mode("mingw x86_64", "x86_64-w64-mingw32-gcc", "c89", false), mode("mingw x86_64", "x86_64-w64-mingw32-gcc", "c11", false),
	mode("mingw x86_64", "x86_64-w64-mingw32-g++", "c++98", false), mode("mingw x86_64", "x86_64-w64-mingw32-g++", "c++17", false),
	mode("mingw i686", "i686-w64-mingw32-gcc", "c89", false), mode("mingw i686", "i686-w64-mingw32-gcc", "c11", false),
	mode("mingw i686", "i686-w64-mingw32-g++", "c++98", false), mode("mingw i686", "i686-w64-mingw32-g++", "c++17", false),
}

// TestHelperHeaderWithMinGW compiles testdata/uses.c against every
// release's header with MinGW-w64 for x86-64 and i686 Windows, as C89,
// C11, C++98 (where the release's dlpack.h is) and C++17 under -Wall
// -Wextra -pedantic -Werror, with the Windows C runtime's own string.h.
func TestHelperHeaderWithMinGW(t *testing.T) {
	for _, cc := range mingw {
		tooltest.Require(t, cc.cmd)
	}
	macros := tooltest.Run(t, "", nil, "x86_64-w64-mingw32-gcc", "-dM", "-E", "-x", "c", "/dev/null")
	for _, d := range []string{"_WIN64 1", "__SIZEOF_LONG__ 4", "__SIZEOF_POINTER__ 8"} {
		require.True(t, strings.Contains(macros, "#define "+d+"\n"), "MinGW-w64 x86_64 is not LLP64 Windows: no #define %s", d)
	}
	for _, v := range releases(t) {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			include := generate(t, v)
			for _, cc := range mingw {
				buildUses(t, cc, v, include)
			}
		})
	}
}

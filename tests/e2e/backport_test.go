package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Code as it is written against DLPack v1.0 and v1.1, whose upstream headers
// declare DLManagedTensorVersioned by its struct tag only. Each uses the
// versioned tensor and calls its deleter.
const (
	// pristine code declares the type name itself, after the include (the
	// usual place) ...
	ownTypedefAfter = `#include <dlpack/dlpack.h>
#include <stdlib.h>
typedef struct DLManagedTensorVersioned DLManagedTensorVersioned;
` + versionedUse
	// ... or before it.
	ownTypedefBefore = `typedef struct DLManagedTensorVersioned DLManagedTensorVersioned;
#include <dlpack/dlpack.h>
#include <stdlib.h>
` + versionedUse
	// patched code uses the name its vendored copy added (NumPy's dlpack.c).
	bareName = `#include <dlpack/dlpack.h>
#include <stdlib.h>
` + versionedUse
	versionedUse = `static int deleted;
static void drop(DLManagedTensorVersioned* self) { deleted++; free(self); }
int main(void) {
  DLManagedTensorVersioned* m = (DLManagedTensorVersioned*)calloc(1, sizeof(DLManagedTensorVersioned));
  if (!m) return 1;
  m->version.major = DLPACK_MAJOR_VERSION;
  m->flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  m->deleter = drop;
  m->deleter(m);
  return deleted != 1;
}
`
)

// TestBackportedTypedef proves the typedef dlgen backports to v1.0 and v1.1
// breaks no code written against upstream's headers, in C99, C11 and C++,
// and gives code written against a patched copy the name it uses wherever
// a repeated typedef is legal; DLGEN_BACKPORTS=0 gives upstream's
// declarations exactly, DLGEN_BACKPORTS=1 the name in C99 too.
func TestBackportedTypedef(t *testing.T) {
	strict := []string{"-Wall", "-Wextra", "-Werror", "-pedantic"}
	type mode struct {
		name, cc string
		args     []string
		cplus    bool
		c11      bool // a repeated typedef is legal
	}
	modes := []mode{
		{"gcc c99", "gcc", append([]string{"-std=c99"}, strict...), false, false},
		{"gcc c11", "gcc", append([]string{"-std=c11"}, strict...), false, true},
		{"gcc gnu17", "gcc", strict, false, true},
		{"g++ c++11", "g++", append([]string{"-std=c++11"}, strict...), true, true},
		{"clang c99", "clang", append([]string{"-std=c99"}, strict...), false, false},
		{"clang c11", "clang", append([]string{"-std=c11"}, strict...), false, true},
		{"clang++ c++17", "clang++", append([]string{"-std=c++17"}, strict...), true, true},
	}
	for _, m := range modes {
		tooltest.Require(t, m.cc)
	}
	programs := map[string]string{"own typedef after": ownTypedefAfter, "own typedef before": ownTypedefBefore, "bare name": bareName}
	for _, v := range []string{"1.0", "1.1", "1.2"} {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			dir := generate(t, v, "c")
			header, err := os.ReadFile(filepath.Join(dir, "c", "dlpack", "dlpack.h"))
			require.NoError(t, err)
			native := v == "1.2" // upstream declares the typedef itself from 1.2
			require.Equal(t, !native, strings.Contains(string(header), "#if DLGEN_BACKPORT\n"))
			for _, m := range modes {
				for name, src := range programs {
					for _, setting := range []string{"", "0", "1"} {
						path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".c")
						require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
						args := append([]string{}, m.args...)
						if m.cplus {
							args = append(args, "-x", "c++")
						}
						if setting != "" {
							args = append(args, "-DDLGEN_BACKPORTS="+setting)
						}
						exe := filepath.Join(dir, "prog")
						out, err := tooltest.Try(dir, nil, m.cc, append(args, "-I", filepath.Join(dir, "c"), path, "-o", exe)...)
						// In C++ a struct's tag is a type name of its own.
						named := native || setting == "1" || m.cplus || setting == "" && m.c11
						var want bool
						switch {
						case name == "bare name":
							want = named
						case native || setting == "1":
							// A second typedef is legal where the first is.
							want = m.c11 || m.cplus
						default:
							want = true
						}
						what := m.name + " " + name + " DLGEN_BACKPORTS=" + setting
						if !want {
							// The compiler refuses the name, for the reason the
							// case is about; any other failure is a failure.
							why := "redefinition of typedef"
							if name == "bare name" {
								why = "unknown type name|must use 'struct' tag" // gcc's, clang's words
							}
							tooltest.Exited(t, err, "%s compiled", what)
							assert.Regexp(t, why, out, "%s failed, but not for its reason", what)
							assert.Contains(t, out, "DLManagedTensorVersioned", what)
							continue
						}
						if assert.NoError(t, err, "%s: %s", what, out) {
							tooltest.Run(t, dir, nil, exe)
						}
					}
				}
			}
		})
	}
}

// Package e2e builds dlgen, generates every supported DLPack release and
// compiles what it wrote: the C header with gcc and g++ in several
// standards and with the i686 and aarch64 cross-compilers, the Go package
// for a platform of each data model (and refused on wasm). It also proves
// the layout guards bite.
package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dlgen/dlgen"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// consumer uses every type of the header the way a framework would; the
// versioned parts only where the release has them.
const consumer = `#include <dlpack/dlpack.h>
#include <stdlib.h>

static int deleted;
static void drop(DLManagedTensor* self) { deleted++; free(self); }
#ifdef DLPACK_MAJOR_VERSION
static void drop_versioned(struct DLManagedTensorVersioned* self) { deleted++; free(self); }
#endif

int main(void) {
  static int64_t shape[2] = {2, 3};
  static int64_t strides[2] = {3, 1};
  static float data[6];
  DLManagedTensor* m = (DLManagedTensor*)calloc(1, sizeof(DLManagedTensor));
  DLDevice cpu = {kDLCPU, 0};
  DLDataType f32 = {kDLFloat, 32, 1};
  if (!m) return 1;
  m->dl_tensor.data = data;
  m->dl_tensor.device = cpu;
  m->dl_tensor.ndim = 2;
  m->dl_tensor.dtype = f32;
  m->dl_tensor.shape = shape;
  m->dl_tensor.strides = strides;
  m->dl_tensor.byte_offset = 0;
  m->deleter = drop;
  m->deleter(m);
#ifdef DLPACK_MAJOR_VERSION
  {
    /* v1.0 and v1.1 declare it by its tag only */
    struct DLManagedTensorVersioned* v = (struct DLManagedTensorVersioned*)calloc(1, sizeof(struct DLManagedTensorVersioned));
    if (!v) return 1;
    v->version.major = DLPACK_MAJOR_VERSION;
    v->version.minor = DLPACK_MINOR_VERSION;
    v->flags = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED;
    v->dl_tensor.device = cpu;
    v->deleter = drop_versioned;
    v->deleter(v);
  }
#endif
#if defined(DLPACK_MAJOR_VERSION) && DLPACK_MINOR_VERSION >= 2
  {
    DLPackExchangeAPI api;
    api.header.version.major = DLPACK_MAJOR_VERSION;
    api.header.prev_api = NULL;
    api.current_work_stream = NULL;
    (void)api;
  }
#endif
  return deleted == 0;
}
`

type compiler struct {
	name  string // for messages
	cmd   string
	args  []string
	run   bool // the result runs on this machine
	cplus bool
}

var compilers = []compiler{
	{name: "gcc c99", cmd: "gcc", args: []string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"}, run: true},
	{name: "gcc c11", cmd: "gcc", args: []string{"-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wundef"}, run: true},
	{name: "g++ c++11", cmd: "g++", args: []string{"-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic"}, run: true, cplus: true},
	{name: "g++ c++17", cmd: "g++", args: []string{"-std=c++17", "-Wall", "-Werror"}, run: true, cplus: true},
	{name: "i686 c99", cmd: "i686-linux-gnu-gcc", args: []string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"}},
	{name: "i686 c11", cmd: "i686-linux-gnu-gcc", args: []string{"-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"}},
	{name: "aarch64 c99", cmd: "aarch64-linux-gnu-gcc", args: []string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"}},
	{name: "aarch64 c11", cmd: "aarch64-linux-gnu-gcc", args: []string{"-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"}},
}

func versions(t *testing.T) []string {
	s, err := schema.Default()
	require.NoError(t, err)
	var out []string
	for _, r := range s.Releases {
		out = append(out, r.Version.String())
	}
	return out
}

// generate runs the dlgen binary for one release into a fresh directory.
func generate(t *testing.T, version string, langs string) string {
	dir := t.TempDir()
	tooltest.Run(t, "", nil, tooltest.Dlgen(t), "-lang", langs, "-dlpack-version", version, "-out", dir)
	return dir
}

func TestCHeaderCompilesEverywhere(t *testing.T) {
	for _, cc := range compilers {
		tooltest.Require(t, cc.cmd)
	}
	for _, v := range versions(t) {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			dir := generate(t, v, "c")
			for _, cc := range compilers {
				ext := ".c"
				if cc.cplus {
					ext = ".cc"
				}
				src := filepath.Join(dir, "consumer"+ext)
				require.NoError(t, os.WriteFile(src, []byte(consumer), 0o644))
				exe := filepath.Join(dir, "consumer")
				args := append(append([]string{}, cc.args...), "-I", filepath.Join(dir, "c"), src, "-o", exe)
				if !cc.run {
					args = append(args, "-c")
				}
				if out, err := tooltest.Try(dir, nil, cc.cmd, args...); err != nil {
					t.Fatalf("%s rejects the v%s header: %v\n%s", cc.name, v, err, out)
				}
				if cc.run {
					tooltest.Run(t, dir, nil, exe)
				}
			}
		})
	}
}

// goModule makes dir/go a module without a go directive, which Go reads as
// go1.16 code: the generated package must build in any module, however old
// (no any, no generics).
func goModule(t *testing.T, dir string) string {
	mod := filepath.Join(dir, "go")
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/vendored\n"), 0o644))
	return mod
}

func TestGoPackageBuildsForEveryArch(t *testing.T) {
	tooltest.Require(t, "go")
	for _, v := range versions(t) {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			mod := goModule(t, generate(t, v, "go"))
			if out := tooltest.Run(t, mod, nil, "gofmt", "-l", "."); out != "" {
				t.Fatalf("not gofmt'd: %s", out)
			}
			for _, p := range []string{"linux/amd64", "linux/arm64", "linux/386", "linux/arm", "windows/386", "linux/mips", "linux/s390x", "linux/loong64"} {
				goos, goarch, _ := strings.Cut(p, "/")
				env := []string{"GOOS=" + goos, "GOARCH=" + goarch, "CGO_ENABLED=0", "GOFLAGS=-mod=mod"}
				tooltest.Run(t, mod, env, "go", "vet", "./...")
				tooltest.Run(t, mod, env, "go", "build", "./...")
			}
			// Go on WebAssembly has 8-byte pointers, C 4: no C layout to match.
			out, err := tooltest.Try(mod, []string{"GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=-mod=mod"}, "go", "build", "./...")
			tooltest.Exited(t, err, "the package built for wasm, whose C layout dlgen does not model")
			require.Contains(t, out, "undefined: dlgenKnowsNoCLayoutForThisGOARCH")
		})
	}
}

// TestLayoutGuardsBreakTheBuild corrupts one expected size per ABI and
// checks that the compilers refuse the result.
func TestLayoutGuardsBreakTheBuild(t *testing.T) {
	dir := generate(t, "1.3", "c,go")
	header := filepath.Join(dir, "c", "dlpack", "dlpack.h")
	good, err := os.ReadFile(header)
	require.NoError(t, err)
	src := filepath.Join(dir, "consumer.c")
	require.NoError(t, os.WriteFile(src, []byte(consumer), 0o644))

	cases := []struct{ cc, guard, bad string }{
		{"gcc", "DLGEN_LAYOUT_GUARD(sizeof(DLTensor) == 48, \"size of DLTensor on 64-bit\")", "size of DLTensor on 64-bit"},
		{"aarch64-linux-gnu-gcc", "DLGEN_LAYOUT_GUARD(offsetof(DLManagedTensorVersioned, flags) == 24, \"offset of DLManagedTensorVersioned.flags on 64-bit\")", "offset of DLManagedTensorVersioned.flags on 64-bit"},
		{"i686-linux-gnu-gcc", "DLGEN_LAYOUT_GUARD(sizeof(DLTensor) == 36, \"size of DLTensor on 32-bit/int64-align-4\")", "size of DLTensor on 32-bit/int64-align-4"},
	}
	for _, tc := range cases {
		tooltest.Require(t, tc.cc)
		require.Contains(t, string(good), tc.guard)
		broken := strings.Replace(string(good), tc.guard, strings.Replace(tc.guard, " == ", " == 1 + ", 1), 1)
		require.NoError(t, os.WriteFile(header, []byte(broken), 0o644))
		out, err := tooltest.Try(dir, nil, tc.cc, "-std=c11", "-I", filepath.Join(dir, "c"), "-c", src, "-o", filepath.Join(dir, "x.o"))
		tooltest.Exited(t, err, "%s accepted a wrong layout", tc.cc)
		require.Contains(t, out, tc.bad)
		// The switch turns them off.
		tooltest.Run(t, dir, nil, tc.cc, "-std=c11", "-DDLGEN_NO_LAYOUT_GUARDS", "-I", filepath.Join(dir, "c"), "-c", src, "-o", filepath.Join(dir, "x.o"))
	}
	require.NoError(t, os.WriteFile(header, good, 0o644))

	mod := goModule(t, dir)
	for file, arches := range map[string][2]string{"layout_64bit.go": {"amd64", "386"}, "layout_386.go": {"386", "arm"}, "layout_32bit_align8.go": {"arm", "amd64"}} {
		path := filepath.Join(mod, "dlpack", file)
		goodGo, err := os.ReadFile(path)
		require.NoError(t, err)
		want := "_ = x[unsafe.Sizeof(Tensor{})-"
		require.Contains(t, string(goodGo), want)
		require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(goodGo), want, want+"1-", 1)), 0o644))
		broken, fine := arches[0], arches[1]
		out, err := tooltest.Try(mod, []string{"GOARCH=" + broken, "CGO_ENABLED=0"}, "go", "build", "./...")
		tooltest.Exited(t, err, "go build for %s accepted a wrong layout", broken)
		require.Contains(t, out, file)
		tooltest.Run(t, mod, []string{"GOARCH=" + fine, "CGO_ENABLED=0"}, "go", "build", "./...")
		require.NoError(t, os.WriteFile(path, goodGo, 0o644))
	}
	fmt.Println("layout guards: C (x86_64, aarch64, i686) and Go (64-bit, 386, arm) builds break on a wrong layout")
}

// TestEveryGeneratedFileCarriesItsLicence checks the first lines of every
// file of every release: the generated-code marker, then the SPDX
// identifier, in the file's own comment syntax.
func TestEveryGeneratedFileCarriesItsLicence(t *testing.T) {
	for _, v := range versions(t) {
		dir := generate(t, v, "c,go,python")
		n := 0
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			text, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			lines := strings.SplitN(string(text), "\n", 3)
			require.Len(t, lines, 3, path)
			rel, _ := filepath.Rel(dir, path)
			require.Regexp(t, `^(//|#|/\*) `+regexp.QuoteMeta(dlgen.Marker)+`$`, lines[0], "v%s %s", v, rel)
			require.Regexp(t, `^(//|#| \*) SPDX-License-Identifier: Apache-2\.0$`, lines[1], "v%s %s", v, rel)
			n++
			return nil
		})
		require.NoError(t, err)
		require.Greater(t, n, 5, "files of v%s", v)
	}
}

// TestCHeaderCompilesAsC89 pins that the header alone is valid C89 (no
// trailing comma after the last enumerator, no // comments), as upstream's is:
// a drop-in must build wherever the header it replaces builds. As C++ it
// needs C++11 from v0.7, as docs/c.md says.
func TestCHeaderCompilesAsC89(t *testing.T) {
	tooltest.Require(t, "gcc")
	for _, v := range versions(t) {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			dir := generate(t, v, "c")
			src := filepath.Join(dir, "c89.c")
			require.NoError(t, os.WriteFile(src, []byte("#include \"dlpack/dlpack.h\"\nint main(void) { return 0; }\n"), 0o644))
			if out, err := tooltest.Try(dir, nil, "gcc", "-std=c89", "-pedantic", "-Wall", "-Wextra", "-Werror",
				"-fsyntax-only", "-I", filepath.Join(dir, "c"), src); err != nil {
				t.Fatalf("gcc -std=c89 rejects the v%s header: %v\n%s", v, err, out)
			}
			// docs/c.md: C++11 for every release; from v0.7 DLDeviceType's
			// enum base, upstream's too, is not C++98.
			tooltest.Require(t, "g++")
			cxx := filepath.Join(dir, "cxx98.cc")
			require.NoError(t, os.WriteFile(cxx, []byte("#include \"dlpack/dlpack.h\"\nint main() { return 0; }\n"), 0o644))
			out, err := tooltest.Try(dir, nil, "g++", "-std=c++98", "-pedantic", "-Werror", "-fsyntax-only", "-I", filepath.Join(dir, "c"), cxx)
			if v == "0.6" {
				require.NoError(t, err, "g++ -std=c++98 rejects the v0.6 header:\n%s", out)
			} else {
				require.Error(t, err, "the v%s header passed as C++98, which its enum base is not", v)
				require.Contains(t, out, "c++11", v)
			}
		})
	}
}

// TestDltensorWithoutCgoIsItsPureGoPart: built without cgo (CGO_ENABLED=0,
// or no C compiler) the module still builds and vets as a whole, as
// `go install ./...` does for the pre-commit hook, and dltensor is its
// pure-Go part: a program that makes and copies tensors works, and one that
// exchanges them through the C ABI builds too, and its first exchange
// says that dltensor needs cgo and how to enable it.
func TestDltensorWithoutCgoIsItsPureGoPart(t *testing.T) {
	tooltest.Require(t, "go")
	root := tooltest.Root()
	nocgo := []string{"CGO_ENABLED=0"}
	tooltest.Run(t, root, nocgo, "go", "build", "./...")
	tooltest.Run(t, root, nocgo, "go", "vet", "./...")
	tooltest.Run(t, root, nocgo, "go", "test", "-count=1", "-run", "TestExchangeWithoutCgoSaysToEnableIt", "./runtime/dltensor")
	program := func(body string) string {
		dir := t.TempDir()
		src := filepath.Join(dir, "main.go")
		require.NoError(t, os.WriteFile(src, []byte("package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/dlgen/dlgen/runtime/dltensor\"\n)\n\n"+
			"func main() {\n"+body+"}\n"), 0o644))
		// An overlay places the program inside the module without writing there.
		overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(root, "nocgoprobe", "main.go"): src}})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o644))
		exe := filepath.Join(dir, "probe")
		tooltest.Run(t, root, nocgo, "go", "build", "-o", exe, "-overlay", filepath.Join(dir, "overlay.json"), "./nocgoprobe")
		return tooltest.Run(t, dir, nil, exe)
	}
	out := program("\tt, _ := dltensor.FromSlice([]float32{1, 2, 3, 4}, 2, 2)\n\tdefer t.Close()\n\tc, err := t.Contiguous()\n\tfmt.Println(c.Shape(), err)\n")
	assert.Equal(t, "[2 2] <nil>\n", out, "copying tensors needs no cgo")
	out = program("\tt, _ := dltensor.FromSlice([]float32{1})\n\t_, err := t.Export()\n\tfmt.Println(err)\n")
	assert.Equal(t, "dltensor: Export: dltensor needs cgo to exchange tensors through the C ABI: "+
		"build with CGO_ENABLED=1 and a C compiler (gcc or clang on PATH, or named by CC)\n", out)
}

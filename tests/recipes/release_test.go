// Package recipes follows docs/contributing.md's recipes to the letter on
// copies of the schema and of dlgen's sources, and builds what comes out:
// a new DLPack release is an edit of schema/dlpack.yaml alone, and a new
// language is a backend folder and one import line.
package recipes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/generate"
	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/dlgen/dlgen/tests/rust"
	"github.com/stretchr/testify/require"

	_ "github.com/dlgen/dlgen/internal/backend/all"
)

// fakeRelease is contributing.md's "new DLPack release" done to the
// embedded schema: release 1.4 with a new small float type code (its
// dtype name, width and encoding) and a new field at the end of
// DLManagedTensorVersioned, each tagged since 1.4, and the minor version
// macro's value for it. Each edit is (what it follows, what it adds).
var fakeRelease = [][2]string{
	{"  # dmlc/dlpack pull requests 186", "  - version: \"1.4\"\n    notes: \"A fake release of the recipe test, a small float and a field.\"\n"},
	{"      - {since: \"1.3\", value: \"3\"}\n", "      - {since: \"1.4\", value: \"4\"}\n"},
	{"          is 32. A complex number of two float16 is kDLComplex with 32 bits.\n",
		"      - {name: kDLFloat8_e2m5, value: 19, since: \"1.4\", bits: 8, dtypes: {float8_e2m5: 8}, float: {exponent: 2, mantissa: 5, bias: 1, special: ieee}, doc: \"8-bit float, 2 exponent and 5 mantissa bits.\"}\n"},
	{"      - {name: dl_tensor, type: DLTensor, since: \"1.0\", doc: \"The lent tensor.\"}\n\n  - functype: DLPackManagedTensorAllocator",
		"      - {name: reserved, type: uint64_t, since: \"1.4\", doc: \"A field of the fake release; 0.\"}\n"},
}

// withFakeRelease is the embedded schema with fakeRelease applied.
func withFakeRelease(t *testing.T) *ir.Schema {
	t.Helper()
	src := string(schema.DefaultBytes())
	for _, e := range fakeRelease {
		at := strings.Index(src, e[0])
		require.GreaterOrEqual(t, at, 0, "the schema no longer holds %q", e[0])
		if strings.HasPrefix(e[0], "  #") { // the release goes before the comment on main
			src = src[:at] + e[1] + src[at:]
			continue
		}
		if strings.HasSuffix(e[0], "DLPackManagedTensorAllocator") { // the field goes before the blank line
			cut := at + strings.Index(e[0], "\n\n") + 1
			src = src[:cut] + e[1] + src[cut:]
			continue
		}
		src = src[:at+len(e[0])] + e[1] + src[at+len(e[0]):]
	}
	s, err := schema.Load("fake.yaml", []byte(src))
	require.NoError(t, err)
	return s
}

// TestANewReleaseIsASchemaEdit: after the schema edit alone, dlgen writes
// release 1.4 in every language, and all of it builds and knows the new
// type code and field: the C header and helpers as C99 and C++, the Go
// package, the Rust crate with its safe layer and tests (clippy clean), the
// Python ctypes module (its layout checks run at import) and the
// conformance kit, which reads the new small float by its encoding.
func TestANewReleaseIsASchemaEdit(t *testing.T) {
	s := withFakeRelease(t)
	v, err := s.ParseRelease("1.4")
	require.NoError(t, err)
	out := t.TempDir()
	files, err := generate.Files(generate.Options{Schema: s, SchemaName: "fake.yaml", Version: v, Langs: []string{"c", "go", "python", "rust", "conformance"}})
	require.NoError(t, err)
	_, err = generate.Write(out, files)
	require.NoError(t, err)

	t.Run("c", func(t *testing.T) {
		source := filepath.Join(out, "uses.c")
		require.NoError(t, os.WriteFile(source, []byte(usesC), 0o644))
		for _, cc := range [][]string{{"cc", "-x", "c", "-std=c99"}, {"c++", "-x", "c++", "-std=c++11"}} {
			tooltest.Require(t, cc[0])
			args := append(cc[1:], "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", filepath.Join(out, "c"), "-o", filepath.Join(out, "uses-"+cc[0]), source)
			tooltest.Run(t, out, nil, cc[0], args...)
			require.Equal(t, "19 8 4\n", tooltest.Run(t, out, nil, filepath.Join(out, "uses-"+cc[0])))
		}
	})
	t.Run("go", func(t *testing.T) {
		dir := filepath.Join(out, "go", "dlpack")
		require.NoError(t, os.WriteFile(filepath.Join(out, "go", "go.mod"), []byte("module fake\n\ngo 1.24\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "fake_test.go"), []byte(fakeGoTest), 0o644))
		tooltest.Run(t, dir, []string{"GOFLAGS=-mod=mod"}, "go", "vet", ".")
		tooltest.Run(t, dir, []string{"GOFLAGS=-mod=mod"}, "go", "test", ".")
	})
	t.Run("rust", func(t *testing.T) {
		dir := filepath.Join(out, "rust", "dlpack")
		rust.RunCargo(t, dir, "clippy", "--all-targets", "--", "-D", "warnings")
		rust.RunCargo(t, dir, "test", "--lib", "--tests")
	})
	t.Run("python", func(t *testing.T) {
		python := filepath.Join(tooltest.Root(), ".venv", "bin", "python")
		if _, err := os.Stat(python); err != nil {
			tooltest.Missing(t, "the test venv (.venv) is missing")
		}
		got := tooltest.Run(t, filepath.Join(out, "python"), nil, python, "-c",
			"import dlpack_ctypes as dl; m = dl.DLManagedTensorVersioned; "+
				"print(dl.DLPACK_MINOR_VERSION, dl.DLDataTypeCode.kDLFloat8_e2m5.value, m.reserved.offset == m.dl_tensor.offset + dl.ctypes.sizeof(dl.DLTensor))")
		require.Equal(t, "4 19 True\n", got)
		// The protocol reads and writes the managed tensor by the release's
		// layout: NumPy's tensor imported, and the Tensor exported back to
		// NumPy (with its new field zeroed), whatever the release adds.
		got = tooltest.Run(t, filepath.Join(out, "python"), nil, python, "-c",
			"import numpy as np, dlpack_ctypes as dl; a = np.arange(6, dtype=np.float32).reshape(2, 3); "+
				"t = dl.from_dlpack(a); b = np.from_dlpack(t); print(b.tolist() == a.tolist(), t.__dlpack__(max_version=(1, 4)) is not None)")
		require.Equal(t, "True True\n", got)
		got = tooltest.Run(t, filepath.Join(out, "conformance"), nil, python, "-c",
			"from dlpack_conformance import reference as r; print(r.minifloat(19, 0b0_01_00000), r.minifloat(19, 0b1_11_00000))")
		require.Equal(t, "1.0 -inf\n", got)
	})
}

// usesC compiles the header and the helpers, and prints the new code, a
// float8_e2m5's bits as the helpers parse its name, and the minor version.
const usesC = `#include <stdio.h>
#include "dlpack/dlpack_helpers.h"

int main(void) {
    DLManagedTensorVersioned m;
    DLDataType t;
    dlgen_error err;
    m.reserved = 0;
    if (dlgen_parse_dtype("float8_e2m5", &t, &err) != DLGEN_OK) {
        return 1;
    }
    printf("%d %d %d\n", (int)kDLFloat8_e2m5, (int)t.bits + (int)m.reserved, DLPACK_MINOR_VERSION);
    return 0;
}
`

// fakeGoTest checks the Go package's new declarations.
const fakeGoTest = `package dlpack

import "testing"

func TestFakeRelease(t *testing.T) {
	var m ManagedTensorVersioned
	m.Reserved = 0
	d, err := ParseDataType("float8_e2m5")
	if err != nil || d.Code != DataTypeCodeFloat8E2m5 || d.Bits != 8 || MinorVersion != 4 {
		t.Fatalf("%v %v %d", d, err, MinorVersion)
	}
}
`

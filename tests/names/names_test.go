// Package names proves the other side of the schema's reserved names
// (ir.ReservedWords(), every backend's lists): names that look dangerous but no language reserves
// (type_, self_, Match, Object, None_ ...) pass the loader, and what dlgen
// writes with them compiles in every language: C (C11, C23) and C++20,
// Go, Python's ctypes, Cython and Rust. It also writes the lists of names
// dlgen's output uses itself (each backend's output_names.go,
// outputnames_test.go) and
// fails when they and the output part.
package names

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/dlgen/dlgen/internal/backend/all"
	"github.com/dlgen/dlgen/internal/generate"
	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/dlgen/dlgen/tests/rust"
	"github.com/stretchr/testify/require"
)

// The borderline names, each on no list of ir.ReservedWords() for its kind,
// and no two of one scope folding alike (ir.Fold).
var (
	fields      = []string{"type_", "self_", "Match", "Impl", "Class", "Lambda", "Nil", "Def", "_align", "fields", "value", "name", "cls", "this_", "Object"}
	enumerators = []string{"None_", "Value", "Self_", "Name", "kind"}
	params      = []string{"type_", "cls", "this_"}
	paramTypes  = []string{"int32_t", "void*", "DLBorderline*"}
)

// release is the release the borderline declarations are added to.
var release = ir.Version{Major: 1, Minor: 3}

// borderline writes every language of release for the default schema plus
// an enum, a struct and a function type named with the borderline names,
// and returns the output directory.
func borderline(t *testing.T, langs ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("\n  - enum: DLBorderlineKind\n    since: \"1.3\"\n    storage: int32_t\n    doc: Enumerators no language reserves.\n    values:\n")
	for i, n := range enumerators {
		fmt.Fprintf(&b, "      - {name: %s, value: %d, since: \"1.3\", doc: \"Borderline.\"}\n", n, i)
	}
	b.WriteString("  - struct: DLBorderline\n    since: \"1.3\"\n    doc: Fields no language reserves.\n    fields:\n")
	for _, n := range fields {
		fmt.Fprintf(&b, "      - {name: %s, type: int32_t, since: \"1.3\", doc: \"Borderline.\"}\n", n)
	}
	b.WriteString("  - functype: DLBorderlineCallback\n    since: \"1.3\"\n    doc: Parameters no language reserves.\n    returns: int\n    params:\n")
	for i, n := range params {
		fmt.Fprintf(&b, "      - {name: %s, type: %q}\n", n, paramTypes[i])
	}
	src := string(schema.DefaultBytes())
	i := strings.Index(src, "\npython:")
	require.Positive(t, i)
	s, err := schema.Load("borderline.yaml", []byte(src[:i]+b.String()+src[i:]))
	require.NoError(t, err, "the borderline names must load")
	files, err := generate.Files(generate.Options{Schema: s, SchemaName: "borderline.yaml", Version: release, Langs: langs})
	require.NoError(t, err)
	out := t.TempDir()
	_, err = generate.Write(out, files)
	require.NoError(t, err)
	return out
}

func TestBorderlineNamesCompileInC(t *testing.T) {
	out := borderline(t, "c")
	var src strings.Builder
	src.WriteString("#include <dlpack/dlpack.h>\n\nstatic int call(int32_t type_, void* cls, DLBorderline* this_) { (void)cls; return (int)type_ + this_->value; }\n\nint main(void) {\n  DLBorderline b;\n  DLBorderlineCallback f = call;\n  int sum = 0;\n")
	for _, n := range fields {
		fmt.Fprintf(&src, "  b.%s = 1;\n  sum += b.%s;\n", n, n)
	}
	for _, n := range enumerators {
		fmt.Fprintf(&src, "  sum += (int)%s;\n", n)
	}
	src.WriteString("  return f(0, NULL, &b) + sum == 1 + 15 + 10 ? 0 : 1;\n}\n")
	for _, cc := range []struct {
		cmd, file string
		args      []string
	}{
		{"gcc", "c11.c", []string{"-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"}},
		{"gcc", "c23.c", []string{"-std=c2x", "-Wall", "-Wextra", "-Werror"}},
		{"g++", "cxx20.cc", []string{"-std=c++20", "-Wall", "-Wextra", "-Werror", "-pedantic"}},
	} {
		tooltest.Require(t, cc.cmd)
		file := filepath.Join(out, cc.file)
		require.NoError(t, os.WriteFile(file, []byte(src.String()), 0o644))
		exe := strings.TrimSuffix(file, filepath.Ext(file))
		tooltest.Run(t, out, nil, cc.cmd, append(cc.args, "-I", filepath.Join(out, "c"), file, "-o", exe)...)
		tooltest.Run(t, out, nil, exe)
	}
}

func TestBorderlineNamesCompileInGo(t *testing.T) {
	goTool := tooltest.Require(t, "go")
	out := borderline(t, "go")
	mod := filepath.Join(out, "go")
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/borderline\n\ngo 1.24\n"), 0o644))
	tooltest.Run(t, mod, []string{"GOFLAGS=-mod=mod", "GOWORK=off"}, goTool, "vet", "./...") // vet builds; the layout guards name every field
}

func TestBorderlineNamesImportInPython(t *testing.T) {
	python := tooltest.Require(t, "python3")
	out := borderline(t, "python")
	script := fmt.Sprintf(`import dlpack_ctypes as d
b = d.DLBorderline()
for n in %q.split():
    setattr(b, n, 2)
    assert getattr(b, n) == 2, n
assert [f[0] for f in d.DLBorderline._fields_] == %q.split()
assert list(d.DLBorderlineKind.__members__) == %q.split()
`, strings.Join(fields, " "), strings.Join(fields, " "), strings.Join(enumerators, " "))
	tooltest.Run(t, filepath.Join(out, "python"), nil, python, "-c", script)
}

func TestBorderlineNamesCompileInCython(t *testing.T) {
	cythonize := filepath.Join(tooltest.Root(), ".venv", "bin", "cythonize")
	if _, err := os.Stat(cythonize); err != nil {
		tooltest.Missing(t, "cythonize is not installed in .venv")
	}
	out := borderline(t, "python")
	tooltest.Run(t, filepath.Join(out, "python"), nil, cythonize, "-q", "-i", "dlpack_cython.pyx")
}

func TestBorderlineNamesBuildInRust(t *testing.T) {
	cargo := rust.Cargo(t)
	out := borderline(t, "rust")
	env := append(rust.Env(), "CARGO_TARGET_DIR="+filepath.Join(tooltest.Root(), ".cache", "rust", "names-target"))
	tooltest.Run(t, filepath.Join(out, "rust", "dlpack"), env, cargo, "build", "--all-targets")
}

// Package abi proves that dlgen's output has the ABI of real upstream DLPack
// headers, one per release, as packages ship them (Debian, PyPI wheels, a
// crate; see upstreams in abi_test.go), on x86_64, i686 and aarch64 with GCC
// and on the clang targets frameworks ship for; that the C header's layout
// guards pick the right data model on every clang target and compile there
// for every release; and that the generated Go types have the layout of the
// C types, through cgo here and per GOOS/GOARCH against clang.
//
// Probes are never run: GCC's values are placed in an ELF section of an
// object file and read back with objcopy, clang's read from the LLVM IR it
// emits.
package abi

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
)

// Probe is one measured value: a name for reports and the C expression.
type Probe struct {
	Name, Expr string // what reports call it, and the C expression
	CXXOnly    bool   // measured only when the header is compiled as C++
}

// Probes lists every ABI fact of api: sizes, alignments, offsets and field
// sizes of structs, signedness of integer fields, enum sizes and values,
// flag and macro values, and function-pointer sizes.
func Probes(api *ir.API) []Probe {
	var ps []Probe
	add := func(name, expr string) { ps = append(ps, Probe{Name: name, Expr: expr}) }
	for _, m := range api.Macros {
		switch m.Kind {
		case ir.MacroInteger:
			add("value of "+m.Name, m.Name)
		default:
			add("defined "+m.Name, fmt.Sprintf("DLGEN_DEFINED_%s", m.Name))
		}
	}
	for _, d := range api.Decls {
		switch d := d.(type) {
		case *ir.Struct:
			c := d.CType(api.Version())
			add("size of "+d.Name, "sizeof("+c+")")
			add("alignment of "+d.Name, "DLGEN_ALIGNOF("+c+")")
			for _, f := range d.Fields {
				member := fmt.Sprintf("((%s*)0)->%s", c, f.Name)
				add("offset of "+d.Name+"."+f.Name, fmt.Sprintf("offsetof(%s, %s)", c, f.Name))
				add("size of "+d.Name+"."+f.Name, "sizeof("+member+")")
				if f.Type.Kind == ir.Scalar {
					add("signedness of "+d.Name+"."+f.Name, fmt.Sprintf("(((__typeof__(%s))-1) < 0)", member))
				}
			}
		case *ir.Enum:
			add("size of "+d.Name, "sizeof("+d.Name+")")
			ps = append(ps, Probe{Name: "signedness of the C++ base of " + d.Name, CXXOnly: true,
				Expr: fmt.Sprintf("std::is_signed<std::underlying_type<%s>::type>::value", d.Name)})
			for _, e := range d.Values {
				add("value of "+e.Name, e.Name)
			}
		case *ir.Flags:
			for _, b := range d.Bits {
				add("value of "+b.Name, b.Name)
			}
		case *ir.FuncType:
			add("size of "+d.Name, "sizeof("+d.Name+")")
		}
	}
	return ps
}

// Source renders a translation unit that stores every probe, as uint64, in
// the array dlgen_probe, placed in its own ELF section when inSection.
func Source(api *ir.API, cplusplus, inSection bool) string {
	var b strings.Builder
	if cplusplus {
		b.WriteString("#include <type_traits>\n#define DLGEN_ALIGNOF(T) alignof(T)\n")
	} else {
		b.WriteString("#define DLGEN_ALIGNOF(T) _Alignof(T)\n")
	}
	b.WriteString("#include <stdint.h>\n#include <stddef.h>\n#include <dlpack/dlpack.h>\n")
	for _, m := range api.Macros {
		if m.Kind != ir.MacroInteger {
			fmt.Fprintf(&b, "#ifdef %[1]s\n#define DLGEN_DEFINED_%[1]s 1\n#else\n#define DLGEN_DEFINED_%[1]s 0\n#endif\n", m.Name)
		}
	}
	if inSection {
		b.WriteString("__attribute__((section(\".dlgen_values\"), used))\n")
	}
	if cplusplus {
		b.WriteString("extern ")
	}
	b.WriteString("const uint64_t dlgen_probe[] = {\n")
	for _, p := range Probes(api) {
		if p.CXXOnly && !cplusplus {
			b.WriteString("  0,\n")
			continue
		}
		fmt.Fprintf(&b, "  (uint64_t)(%s), /* %s */\n", p.Expr, p.Name)
	}
	b.WriteString("};\n")
	return b.String()
}

// Target is a compiler and the objcopy that reads its objects, or a clang
// target whose values are read from the LLVM IR it emits.
type Target struct {
	Name, CC, Objcopy string       // the name in reports, the compiler, its objcopy
	CPlusPlus         bool         // compile the header as C++
	ABI               ir.ABI       // the data model of the target
	Clang             *ClangTarget // set for a clang target, read from LLVM IR
}

// Targets are the GCC compilers every header is measured on; the measured
// ClangTargets follow them.
var Targets = []Target{
	{Name: "x86_64", CC: "gcc", Objcopy: "objcopy", ABI: ir.ABI64},
	{Name: "x86_64 C++", CC: "g++", Objcopy: "objcopy", CPlusPlus: true, ABI: ir.ABI64},
	{Name: "i686", CC: "i686-linux-gnu-gcc", Objcopy: "i686-linux-gnu-objcopy", ABI: ir.ABI32Int64Align4},
	{Name: "aarch64", CC: "aarch64-linux-gnu-gcc", Objcopy: "aarch64-linux-gnu-objcopy", ABI: ir.ABI64},
}

// Measure compiles the probes of api against the dlpack/dlpack.h found in
// includeDir for target and returns the values, in Probes order.
func Measure(t testing.TB, target Target, api *ir.API, includeDir string) []uint64 {
	t.Helper()
	if target.Clang != nil {
		return measureClang(t, *target.Clang, Source(api, false, false), includeDir)
	}
	tooltest.Require(t, target.CC)
	tooltest.Require(t, target.Objcopy)
	dir := t.TempDir()
	ext, std := ".c", "-std=gnu11"
	if target.CPlusPlus {
		ext, std = ".cc", "-std=gnu++17"
	}
	src := filepath.Join(dir, "probe"+ext)
	if err := os.WriteFile(src, []byte(Source(api, target.CPlusPlus, true)), 0o644); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "probe.o")
	tooltest.Run(t, dir, nil, target.CC, std, "-DDLGEN_NO_LAYOUT_GUARDS", "-I", includeDir, "-c", src, "-o", obj)
	bin := filepath.Join(dir, "probe.bin")
	tooltest.Run(t, dir, nil, target.Objcopy, "--dump-section", ".dlgen_values="+bin, obj)
	raw, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	n := len(Probes(api))
	if len(raw) != 8*n {
		t.Fatalf("%s: section has %d bytes, want %d", target.Name, len(raw), 8*n)
	}
	vals := make([]uint64, n)
	for i := range vals {
		vals[i] = binary.LittleEndian.Uint64(raw[8*i:]) // all three targets are little-endian
	}
	return vals
}

// Declarations is the shape of a header as its preprocessed text shows
// it: DLPACK_* macro definitions, the members of each struct and enum in
// order (typedef'd or declared by tag only), and the function-pointer
// typedef names.
type Declarations struct {
	Macros   map[string]string   // name -> replacement text, spaces collapsed
	Members  map[string][]string // "struct DLTensor" / "enum DLDeviceType" -> member names
	FuncPtrs []string            // the function-pointer typedef names
}

var (
	macroLine  = regexp.MustCompile(`(?m)^#define (DLPACK_\w+)(.*)$`)
	typedefRE  = regexp.MustCompile(`(?s)(?:typedef\s+)?\b(struct|enum)\s*(\w*)\s*(?::\s*\w+\s*)?\{(.*?)\}\s*(\w*)\s*;`)
	funcPtrRE  = regexp.MustCompile(`typedef\s+[\w\s\*]+\(\s*\*\s*(\w+)\s*\)\s*\(`)
	fieldNameR = regexp.MustCompile(`\(\s*\*\s*(\w+)\s*\)|(\w+)\s*(?:=[^,]*)?$`)
	spaces     = regexp.MustCompile(`\s+`)
)

// Declare preprocesses the header under includeDir (as C) and extracts its
// Declarations.
func Declare(t testing.TB, includeDir string) Declarations {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "decl.c")
	if err := os.WriteFile(src, []byte("#include <dlpack/dlpack.h>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := Declarations{Macros: map[string]string{}, Members: map[string][]string{}}
	for _, m := range macroLine.FindAllStringSubmatch(tooltest.Run(t, dir, nil, "gcc", "-E", "-dM", "-I", includeDir, src), -1) {
		d.Macros[m[1]] = strings.TrimSpace(spaces.ReplaceAllString(m[2], " "))
	}
	text := tooltest.Run(t, dir, nil, "gcc", "-E", "-P", "-I", includeDir, src)
	for _, m := range typedefRE.FindAllStringSubmatch(text, -1) {
		sep := ";"
		if m[1] == "enum" {
			sep = ","
		}
		var names []string
		for _, part := range strings.Split(m[3], sep) {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			if f := fieldNameR.FindStringSubmatch(part); f != nil {
				names = append(names, f[1]+f[2])
			}
		}
		key := m[1] + " " + m[4] // "struct DLTensor", or "struct " for a tag only
		if m[2] != "" {
			key += " (tag " + m[2] + ")"
		}
		d.Members[key] = names
	}
	for _, m := range funcPtrRE.FindAllStringSubmatch(text, -1) {
		d.FuncPtrs = append(d.FuncPtrs, m[1])
	}
	sort.Strings(d.FuncPtrs)
	return d
}
